"""ripgrep as the prefilter of a search without an index: one ``rg`` run over the vault
(or over a list of notes) finds the notes that may contain a term, and on how many lines.

``rg`` reads the vault with native threads several times faster than Python can, so the
first search of a large vault, before the index exists, costs about one ``rg`` scan
("scale out with existing engines"). ``rg`` is only a prefilter: its pattern is built to
match *at least* wherever :func:`co_obsidian.text.term_pattern` matches (accents
optional, any case, no left word edge, a phrase may break across lines), and every
note it names is verified in Python against the real text before it is shown. Without
``rg`` (or if it fails) the caller reads the notes itself.

Same files as :func:`co_obsidian.vault.walk`: ``*.md`` only, hidden files and folders
skipped (rg's default), no ``.gitignore`` rules and no user rg config; rg does not follow
symlinked notes (the caller reads those itself) and anything rg names that the walk did
not list is dropped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import unicodedata

from co_obsidian import text as T

TIMEOUT = 60.0
_MARKS = r"[\x{300}-\x{36f}]"
_SPACE = r"[\s\x1c-\x1f]"  # Python's \s also matches \x1c-\x1f; Rust's does not
_RIGHT = r"(?:$|[^\p{L}\p{N}])"
# Python's IGNORECASE maps these to ASCII i; Unicode simple case folding (rg -i) does not
_EXTRA = {"i": "İı"}


def executable() -> str | None:
    """The ``rg`` to use, or None (not installed, or ``CO_OBSIDIAN_RG=0``)."""
    if os.environ.get("CO_OBSIDIAN_RG", "1") in ("0", "false", "no", "off"):
        return None
    return shutil.which("rg")


def _char(char: str) -> str:
    base = T.fold(char)
    if base in T._VARIANTS:
        # the same letters as a class, but spelled as an alternation: rg then still finds
        # literal prefixes to skip ahead with (a class this big stops that)
        variants = T._VARIANTS[base] + _EXTRA.get(base, "")
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
    class of every letter before the word) would cost rg its literal fast path, twice
    the time, and Python checks edges anyway."""
    words = unicodedata.normalize("NFC", term).split()
    body = ""
    for word in reversed(words):
        part = "".join(_char(c) for c in word)
        body = part if not body else f"{part}(?:{_SPACE}+{body}|{_SPACE}*$)"
    if T._is_word(words[-1][-1]):
        body += _RIGHT
    return body


# Past this many notes (or bytes of names) rg is given the vault, not a list of notes:
# the command line stays well under the kernel's limit, and the caller intersects anyway.
MAX_PATHS = 4000
MAX_PATH_BYTES = 200_000


class Pending:
    """One rg run counting the lines that may hold ``term``, in the whole vault or only
    in ``paths`` (vault-relative). ``result()`` collects it, ``cancel()`` stops it."""

    def __init__(self, rg: str, root: str, term: str, paths: list[str] | None = None) -> None:
        args = ["."]
        if paths is not None and len(paths) <= MAX_PATHS:
            if sum(len(p) + 1 for p in paths) <= MAX_PATH_BYTES:
                args = paths
        cmd = [
            rg, "--no-config", "--no-ignore", "--no-messages", "-a", "-i", "--null",
            "--with-filename", "--color", "never", "-g", "*.md", "-c",
            "-e", term_regex(term), "--", *args,
        ]  # fmt: skip
        self.proc: subprocess.Popen[bytes] | None = None
        self.failed = False
        if paths is not None and not paths:
            return  # nothing to look at: an empty result
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
        """{note: lines that may hold the term} for notes where it may occur (symlinked
        notes are not followed: the caller checks those); None if rg failed (the caller
        then reads the notes itself)."""
        if self.failed:
            return None
        counts: dict[str, int] = {}
        proc = self.proc
        if proc is None:
            return counts
        # one blocking read (communicate() with a timeout wakes up for every chunk rg
        # writes); a timer stops an rg that hangs
        timer = threading.Timer(TIMEOUT, proc.kill)
        timer.start()
        try:
            out = proc.stdout.read() if proc.stdout is not None else b""
            code = proc.wait()
            errors = proc.stderr.read() if proc.stderr is not None else b""
            # 2 with nothing said: a file could not be read (gone since it was listed,
            # no permission); it holds nothing here, and the index skips it too.
            # Anything said (a bad pattern), or killed: failed
            if code not in (0, 1, 2) or (code == 2 and errors.strip()):
                return None
            # one decode for the whole output: a per-line fsdecode costs more than rg's scan
            for line in out.decode("utf-8", "surrogateescape").split("\n"):
                path, sep, count = line.partition("\0")
                if sep:
                    counts[path[2:] if path.startswith("./") else path] = int(count)
        except (OSError, ValueError, subprocess.SubprocessError):
            return None
        finally:
            timer.cancel()
            self.cancel()
        return counts

    def cancel(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def start(rg: str, root: str, term: str, paths: list[str] | None = None) -> Pending:
    return Pending(rg, root, term, paths)


def count(rg: str, root: str, term: str, paths: list[str] | None = None) -> dict[str, int] | None:
    """:class:`Pending` run to the end."""
    return start(rg, root, term, paths).result()
