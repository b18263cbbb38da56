"""Presets: named tables of exact command forms a user turns on (``co policy preset read-only``).

A preset is as weak as Co's built-in rules: any rule of your own overrides it. It is
consulted for a part of a shell command that nothing stronger decided, and allows that part
only when the part is one of the forms in its table (``co_core/policy/read_only.py``, read
by ``co_core/policy/shell/forms.py``); otherwise the part asks, and the reason says what
the table does not list. A command every part of which a read-only preset allowed runs
read-only (``Decision.read_only``): its sandbox mounts the workspace and every other path
read-only, so if the table were ever wrong the command would fail instead of writing.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from co_core.policy.shell.forms import Form

# Input redirections a read-only preset never allows: bash opens a network connection.
NOT_FILES = ("/dev/tcp/", "/dev/udp/")


@dataclass(frozen=True)
class Preset:
    name: str
    help: str
    table: str  # "module:attribute" of its rows, loaded on first use

    @functools.cached_property
    def rows(self) -> tuple[Form, ...]:
        module, _, attribute = self.table.partition(":")
        rows: tuple[Form, ...] = getattr(importlib.import_module(module), attribute)
        return rows

    @functools.cached_property
    def programs(self) -> dict[str, list[Form]]:
        found: dict[str, list[Form]] = {}
        for row in self.rows:
            found.setdefault(row.program, []).append(row)
        return found

    def cover(self, words: Sequence[str], patterns: frozenset[int] = frozenset()) -> Form | str:
        """The row these words are a form of, or why none is (for the user)."""
        from co_core.policy.shell.forms import Miss, check

        rows = self.programs.get(words[0]) if words else None
        if not rows:
            return f"the {self.name} preset does not list {words[0] if words else 'it'}"
        whys = []
        for row in rows:
            try:
                check(row, words, patterns)
                return row
            except Miss as why:
                whys.append(str(why))
        relevant = [w for w in whys if not w.startswith("it is not ")]
        return (relevant or [f"the {self.name} preset lists no such {words[0]} command"])[0]

    @staticmethod
    def covers_input(source: str) -> bool:
        """``< FILE`` reads a file (but ``/dev/tcp/…`` is a network connection in bash)."""
        return not source.startswith(NOT_FILES)


READ_ONLY = Preset(
    "read-only",
    "shell commands in exact read-only forms (list, search, print, compare, git's reads), "
    "run read-only",
    "co_core.policy.read_only:ROWS",
)
PRESETS: dict[str, Preset] = {preset.name: preset for preset in (READ_ONLY,)}
