"""The change record behind ``/undo``: every tool that writes a file calls ``before_write`` first.

The previous state of the file (its bytes, or its absence) is kept per session and turn,
so the last turn's file changes can be reverted whichever plugin made them.
(Minimal version; co-shell's issue extends it with persistence, listings and diffs.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Change:
    turn: int
    path: Path
    before: bytes | None  # None: the file did not exist


@dataclass
class ChangeRecord:
    session_id: str
    turn: int = 0
    changes: list[Change] = field(default_factory=list)

    def next_turn(self) -> int:
        self.turn += 1
        return self.turn

    def before_write(self, path: Path) -> None:
        """Remember how ``path`` looks now, once per turn, before a tool changes it."""
        path = Path(path)
        if any(c.turn == self.turn and c.path == path for c in self.changes):
            return
        before = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        self.changes.append(Change(self.turn, path, before))
