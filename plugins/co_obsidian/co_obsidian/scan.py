"""Search without the index, while it is built: ripgrep reads the notes.

One ``rg -c`` per query term runs over the vault (side by side: ripgrep reads with
native threads several times faster than Python could), counting the lines where the
term may occur. A term may also match a note's file name instead of its text (as in the
index: folder names do not count). The notes holding every term are ranked like the
index ranks them, roughly: a note whose title is the query first, then title matches,
then matching lines for the note's length. rg only preselects: the caller reads the
candidates best first and keeps those whose real text matches (its patterns are built
to match at least wherever :func:`co_obsidian.text.term_pattern` does: accents optional,
any case, only the right word edge, a phrase may break across lines).

Same files as :func:`co_obsidian.vault.walk`: ``*.md`` in any case, hidden files and
folders skipped (rg's default), no ``.gitignore`` rules and no user rg config;
symlinked notes are named to rg one by one (it does not follow links while walking).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import threading
import unicodedata
from collections.abc import Mapping
from pathlib import Path

from co_obsidian import text as T
from co_obsidian.vault import stem

TIMEOUT = 60.0
_MARKS = r"[\x{300}-\x{36f}]"
_SPACE = r"[\s\x1c-\x1f]"  # Python's \s also matches \x1c-\x1f; Rust's does not
_RIGHT = r"(?:$|[^\p{L}\p{N}])"
# Python's IGNORECASE maps these to ASCII i; Unicode simple case folding (rg -i) does not
_EXTRA = {"i": "İı"}
MAX_LINKS = 2000  # symlinked notes named on rg's command line


def executable() -> str | None:
    """The ``rg`` to use, or None (not installed, or ``CO_OBSIDIAN_RG=0``)."""
    if os.environ.get("CO_OBSIDIAN_RG", "1") in ("0", "false", "no", "off"):
        return None
    return shutil.which("rg")


def _char(char: str) -> str:
    base = T.fold(char)
    if base in T.VARIANTS:
        # the same letters as a class, but spelled as an alternation: rg then still finds
        # literal prefixes to skip ahead with (a class this big stops that)
        variants = T.VARIANTS[base] + _EXTRA.get(base, "")
        upper = [c.upper() for c in variants]  # -i folds too; these help rg's literals
        letters = dict.fromkeys([*variants, *(u for u in upper if len(u) == 1)])
        return "(?:" + "|".join(letters) + f"){_MARKS}*"
    if base in _EXTRA:
        return f"[{base}{_EXTRA[base]}]"
    if char.isascii() and not char.isalnum():
        return "\\" + char if char in r"\.+*?()|[]{}^$#&-~" else char
    return char


def term_regex(term: str) -> str:
    """An rg regex (used with ``-i``) matching wherever ``term_pattern(term)`` matches.
    Line by line: a phrase may also match as a prefix that ends its line (the rest is on
    the next line; Python checks). Only the right word edge is checked: a left one (a
    class of every letter before the word) would cost rg its literal fast path."""
    words = unicodedata.normalize("NFC", term).split()
    body = ""
    for word in reversed(words):
        part = "".join(_char(c) for c in word)
        body = part if not body else f"{part}(?:{_SPACE}+{body}|{_SPACE}*$)"
    if T.is_word_char(words[-1][-1]):
        body += _RIGHT
    return body


class _Count:
    """One ``rg -c`` run for a term; ``result()`` collects {note: lines}, None if rg failed."""

    def __init__(self, rg: str, root: Path, term: str, links: list[str]) -> None:
        cmd = [
            rg, "--no-config", "--no-ignore", "--no-messages", "-a", "-i", "--null",
            "--with-filename", "--color", "never", "--iglob", "*.md", "-c",
            "-e", term_regex(term), "--", ".", *links[:MAX_LINKS],
        ]  # fmt: skip
        self.proc: subprocess.Popen[bytes] | None = None
        try:
            self.proc = subprocess.Popen(
                cmd,
                cwd=root,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,  # small: --no-messages keeps file errors out
            )
        except (OSError, ValueError):  # ValueError: a NUL in the query
            self.proc = None

    def result(self) -> dict[str, int] | None:
        proc = self.proc
        if proc is None:
            return None
        timer = threading.Timer(TIMEOUT, proc.kill)  # an rg that hangs is stopped
        timer.start()
        try:
            out = proc.stdout.read() if proc.stdout is not None else b""
            code = proc.wait()
            errors = proc.stderr.read() if proc.stderr is not None else b""
            # 2 with nothing said: a file could not be read (gone since, no permission);
            # anything said (a bad pattern), or killed: failed
            if code not in (0, 1, 2) or (code == 2 and errors.strip()):
                return None
        except (OSError, ValueError, subprocess.SubprocessError):
            return None
        finally:
            timer.cancel()
            self.close()
        counts: dict[str, int] = {}
        for line in out.decode("utf-8", "surrogateescape").split("\n"):
            path, sep, count = line.partition("\0")
            if sep:
                counts[path.removeprefix("./")] = int(count)
        return counts

    def close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def ranked(
    rg: str, root: Path, sizes: Mapping[str, int], links: list[str], query: T.Query
) -> list[str] | None:
    """The notes that may hold every term, best first; None if rg failed. ``sizes``:
    every note of the vault and its size; ``links``: the symlinked ones."""
    runs = [_Count(rg, root, term, links) for term in query.terms]
    try:
        counts = [run.result() for run in runs]
    finally:
        for run in runs:
            run.close()
    if any(c is None for c in counts):
        return None
    names = {rel: T.nfc(stem(rel)) for rel in sizes}
    patterns = query.patterns
    found: set[str] | None = None
    on_name: list[set[str]] = []
    for term_counts, pattern in zip(counts, patterns, strict=True):
        assert term_counts is not None
        named = {rel for rel, name in names.items() if pattern.search(name)}
        on_name.append(named)
        holding = {rel for rel in term_counts if rel in names} | named
        found = holding if found is None else found & holding
    average = max(1.0, sum(sizes.values()) / max(1, len(sizes)))
    title = query.title

    def score(rel: str) -> tuple[float, str]:
        value = 0.0
        for term_counts, named in zip(counts, on_name, strict=True):
            assert term_counts is not None
            value += 10.0 * (rel in named)
            value += math.log1p(min(term_counts.get(rel, 0), 20)) / (
                0.5 + 0.5 * max(sizes[rel], 0) / average
            )
        if T.title_key(names[rel]) == title:
            value += 1000.0
        return -value, rel

    return sorted(found or (), key=score)
