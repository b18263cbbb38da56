"""Search without the index, while it is built: ripgrep reads the notes.

The query term that looks rarest in a sample of notes is counted by one ``rg -c`` over
the vault (ripgrep reads with native threads several times faster than Python could);
the other terms only in the notes that hold it (one rg run each, side by side), so a
query with one rare word costs about one rg scan however many words it has; a term in
half the sample or more is not counted at all. A term may
also match a note's file name instead of its text (as in the index: folder names do not
count). The notes holding every term are ranked like the index ranks them, roughly: a
note whose title is the query first, then title matches, then matching lines for the
note's length. rg only preselects: the caller reads the candidates best first and keeps
those whose real text matches (its patterns are built to match at least wherever
:func:`co_obsidian.text.term_pattern` does: accents optional, any case, only the right
word edge, a phrase may break across lines).

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
from collections.abc import Callable, Iterable
from pathlib import Path

from co_obsidian import text as T
from co_obsidian.vault import read_text, stem

TIMEOUT = 60.0
_MARKS = r"[\x{300}-\x{36f}]"
_SPACE = r"[\s\x1c-\x1f]"  # Python's \s also matches \x1c-\x1f; Rust's does not
_RIGHT = r"(?:$|[^\p{L}\p{N}])"
# Python's IGNORECASE maps these to ASCII i; Unicode simple case folding (rg -i) does not
_EXTRA = {"i": "İı"}
# notes named on rg's command line at most (more: rg reads the vault, and the caller
# keeps the ones it asked about), well under the kernel's limit
MAX_PATHS = 4000
MAX_PATH_BYTES = 200_000
SAMPLE = 100  # notes read to guess which term is rarest ...
SAMPLE_CHARS = 4096  # ... this much of each
COMMON_SHARE = 0.5


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
    """One ``rg -c`` run for a term over ``paths`` (vault-relative; ``.`` for the whole
    vault); ``result()`` collects {note: lines}, None if rg failed."""

    def __init__(self, rg: str, root: Path, term: str, paths: list[str]) -> None:
        cmd = [
            rg, "--no-config", "--no-ignore", "--no-messages", "-a", "-i", "--null",
            "--with-filename", "--color", "never", "--iglob", "*.md", "-c",
            "-e", term_regex(term), "--", *paths,
        ]  # fmt: skip
        self.proc: subprocess.Popen[bytes] | None = None
        self.failed = False
        if not paths:
            return
        try:
            self.proc = subprocess.Popen(
                cmd,
                cwd=root,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,  # small: --no-messages keeps file errors out
            )
        except (OSError, ValueError):  # ValueError: a NUL in the query
            self.failed = True

    def result(self) -> dict[str, int] | None:
        proc = self.proc
        if proc is None:
            return None if self.failed else {}
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


def _shares(root: Path, names: list[str], query: T.Query) -> list[float]:
    """For each term, the share of a sample of ``names`` (spread over them) holding it
    in their text or file name."""
    step = max(1, len(names) // SAMPLE)
    sample = names[::step][:SAMPLE]
    patterns = query.patterns
    seen = [0] * len(patterns)
    for rel in sample:
        text = T.nfc(read_text(root / rel, SAMPLE_CHARS) or "")
        name = T.nfc(stem(rel))
        for index, pattern in enumerate(patterns):
            seen[index] += bool(pattern.search(name) or pattern.search(text))
    return [count / max(1, len(sample)) for count in seen]


def _within(paths: list[str]) -> list[str]:
    """What to give rg to look at these notes: themselves, or the vault when they are too
    many for a command line (the caller keeps only the notes it asked about)."""
    if len(paths) <= MAX_PATHS and sum(len(p) + 1 for p in paths) <= MAX_PATH_BYTES:
        return paths
    return ["."]


def ranked(
    rg: str,
    root: Path,
    query: T.Query,
    notes: Callable[[], tuple[list[str], list[str]]],
    some_notes: list[str],
) -> list[str] | None:
    """The notes that may hold every term, best first; None if rg failed. ``notes()``
    lists the vault's notes and the symlinked ones among them (called while rg reads the
    vault); ``some_notes``: notes to sample for the rarest term."""
    terms = query.terms
    shares = _shares(root, some_notes, query) if len(terms) > 1 else [0.0]
    order = sorted(range(len(terms)), key=lambda i: (shares[i], -len(terms[i]), i))
    # a further term in most notes is not counted: like BM25, which gives such a word
    # next to no weight, it does not tell notes apart (the notes shown are checked
    # against every term anyway)
    order = order[:1] + [i for i in order[1:] if shares[i] < COMMON_SHARE]
    vault = _Count(rg, root, terms[order[0]], ["."])
    try:
        names, links = notes()
        linked = _Count(rg, root, terms[order[0]], links[:MAX_PATHS]).result()
        first = vault.result()
    finally:
        vault.close()
    if first is None or linked is None:
        return None
    patterns = query.patterns
    listed = set(names)
    # the file names, one per line: a term in none of them is ruled out in one regex scan
    every_name = T.nfc("\n".join(stem(rel) for rel in names))

    def named(term: int, rels: Iterable[str]) -> set[str]:
        """The notes among ``rels`` whose file name holds the term."""
        if not patterns[term].search(every_name):
            return set()
        return {rel for rel in rels if patterns[term].search(T.nfc(stem(rel)))}

    counts: list[dict[str, int]] = [{} for _ in terms]
    on_name: list[set[str]] = [set() for _ in terms]
    on_name[order[0]] = named(order[0], names)
    counts[order[0]] = {rel: n for rel, n in {**first, **linked}.items() if rel in listed}
    found = set(counts[order[0]]) | on_name[order[0]]
    if len(order) > 1 and found:
        # the other terms, only in the notes that hold the first, side by side
        within = _within(sorted(found))
        runs = [(i, _Count(rg, root, terms[i], within)) for i in order[1:]]
        try:
            for term, run in runs:
                got = run.result()
                if got is None:
                    return None
                counts[term] = {rel: n for rel, n in got.items() if rel in found}
                on_name[term] = named(term, found)
                found &= set(counts[term]) | on_name[term]
        finally:
            for _term, run in runs:
                run.close()
    for term in set(range(len(terms))) - set(order):  # not counted, but found in names
        on_name[term] = named(term, found)
    sizes = {}
    base = f"{root}{os.sep}"
    for rel in found:
        try:
            sizes[rel] = os.stat(base + rel).st_size
        except OSError:
            pass  # gone since it was listed
    average = max(1.0, sum(sizes.values()) / max(1, len(sizes)))
    # a note titled as the query has every term in its name
    titled = {rel for rel in set.intersection(*on_name) if T.title_key(stem(rel)) == query.title}

    def score(rel: str) -> tuple[float, str]:
        length = 0.5 + 0.5 * sizes[rel] / average
        value = 1000.0 * (rel in titled)
        for term_counts, named_by in zip(counts, on_name, strict=True):
            value += 10.0 * (rel in named_by)
            value += math.log1p(min(term_counts.get(rel, 0), 20)) / length
        return -value, rel

    return sorted(sizes, key=score)
