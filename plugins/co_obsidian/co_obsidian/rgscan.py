"""ripgrep as the prefilter of a search without an index: one ``rg`` run over the vault
finds the notes that may contain a term, how often, and whether on a heading line.

``rg`` reads the vault with native threads several times faster than Python can, so the
first search of a large vault, before the index exists, costs about one ``rg`` scan
("scale out with existing engines"). ``rg`` is only a prefilter: its pattern is built to
match *at least* wherever :func:`co_obsidian.text.term_pattern` matches (accents
optional, any case, loose word boundaries, a phrase may break across lines), and every
note it names is verified in Python against the real text before it is shown. Without
``rg`` (or if it fails) the caller reads the notes itself.

Same files as :func:`co_obsidian.vault.walk`: ``*.md`` only, hidden files and folders
skipped (rg's default), no ``.gitignore`` rules and no user rg config; symlinked notes
are passed by name (rg does not follow links) and anything rg names that the walk did not
list is dropped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import unicodedata

from co_obsidian import text as T

TIMEOUT = 60.0
_MARKS = r"[\x{300}-\x{36f}]"
_SPACE = r"[\s\x1c-\x1f]"  # Python's \s also matches \x1c-\x1f; Rust's does not
_LEFT = r"(?:^|[^\p{L}\p{N}\x{300}-\x{36f}])"  # looser than text.term_pattern
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
        return f"[{T._VARIANTS[base]}{_EXTRA.get(base, '')}]{_MARKS}*"
    if base in _EXTRA:
        return f"[{base}{_EXTRA[base]}]"
    if char.isascii() and not char.isalnum():
        return "\\" + char if char in r"\.+*?()|[]{}^$#&-~" else char
    return char


def term_regex(term: str) -> str:
    """An rg regex (used with ``-i``) matching wherever ``term_pattern(term)`` matches.
    Line by line: a phrase may also match as a prefix that ends its line (the rest is on
    the next line; Python checks)."""
    words = unicodedata.normalize("NFC", term).split()
    body = ""
    for word in reversed(words):
        part = "".join(_char(c) for c in word)
        body = part if not body else f"{part}(?:{_SPACE}+{body}|{_SPACE}*$)"
    if T._is_word(words[0][0]):
        body = _LEFT + body
    if T._is_word(words[-1][-1]):
        body += _RIGHT
    return body


class Pending:
    """rg runs started for a search: one per term, side by side (and beside Python's own
    walk of the vault). ``result()`` collects them, ``cancel()`` stops them."""

    def __init__(self, rg: str, root: str, terms: list[str]) -> None:
        base = [
            rg, "--no-config", "--no-ignore", "--no-messages", "-a", "-i", "--null",
            "--with-filename", "--color", "never", "-g", "*.md", "-c",
        ]  # fmt: skip
        self.terms = terms
        self.procs: list[subprocess.Popen[bytes]] = []
        self.failed = False
        try:
            for term in terms:
                self.procs.append(
                    subprocess.Popen(
                        [*base, "-e", term_regex(term), "--", "."],
                        cwd=root,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                    )
                )
        except (OSError, ValueError):  # ValueError: a NUL in the query
            self.failed = True
            self.cancel()

    def result(self) -> dict[str, list[int]] | None:
        """{note: lines that may hold each term} for notes that may hold at least one
        term (symlinked notes are not followed: the caller checks those); None if rg
        failed (the caller then reads the notes itself)."""
        if self.failed:
            return None
        counts: dict[str, list[int]] = {}
        try:
            for number, proc in enumerate(self.procs):
                out, _ = proc.communicate(timeout=TIMEOUT)
                if proc.returncode not in (0, 1):  # 2: an error (unreadable file, ...)
                    return None
                for line in out.split(b"\n"):
                    path, sep, count = line.partition(b"\0")
                    if sep:
                        rel = os.fsdecode(path[2:] if path.startswith(b"./") else path)
                        counts.setdefault(rel, [0] * len(self.terms))[number] = int(count)
        except (OSError, ValueError, subprocess.SubprocessError):
            return None
        finally:
            self.cancel()
        return counts

    def cancel(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def start(rg: str, root: str, terms: list[str]) -> Pending:
    return Pending(rg, root, terms)


def search(rg: str, root: str, terms: list[str]) -> dict[str, list[int]] | None:
    """:class:`Pending` run to the end."""
    return start(rg, root, terms).result()
