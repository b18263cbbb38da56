"""What reading a shell command gives: its parts, and the text Co runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from co_core.policy.shell.programs import Finding

Kind = Literal["exec", "write", "read"]
SENTINEL = "\x00"


@dataclass(frozen=True)
class Part:
    """One thing a command does. For an ``exec`` part of a fixed command, ``words`` are
    the program's arguments as it receives them, ``rendered`` the same as written in
    ``text`` (after ``prefix``, its assignments), ``findings`` the arguments that write
    or run something, ``patterns`` the words that are file patterns (``src/*.py``)."""

    kind: Kind
    text: str
    words: tuple[str, ...] = ()
    rendered: tuple[str, ...] = ()
    prefix: str = ""
    findings: tuple[Finding, ...] = ()
    patterns: frozenset[int] = frozenset()  # indices of words that are file patterns

    def text_without(self, word: int) -> str:
        """``text`` with one word replaced by a marker no rule's literal text contains:
        a rule still matching it does not name that word."""
        shown = list(self.rendered)
        shown[word] = SENTINEL
        return " ".join([self.prefix, *shown] if self.prefix else shown)


@dataclass(frozen=True)
class Script:
    """A command read: its parts, and the text Co runs (None: the meaning is not fixed,
    ``problem`` says why)."""

    parts: tuple[Part, ...]
    canonical: str | None
    problem: str | None = None
