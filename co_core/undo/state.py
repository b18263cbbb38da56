"""How a path looked before a tool changed it: the unit ``/undo`` stores and puts back."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

# kinds of state a path can be in
ABSENT, FILE, SYMLINK, DIR, UNKNOWN = "absent", "file", "symlink", "dir", "unknown"
MAX_KEPT_BYTES = 16 * 1024 * 1024  # a tool writing a bigger file keeps no undo copy


@dataclass
class State:
    """How a path looked: ``kind`` plus the bytes (file) or target (symlink)."""

    kind: str
    data: bytes | None = None
    mode: int | None = None

    @classmethod
    def of(cls, path: Path, keep_limit: int = MAX_KEPT_BYTES) -> State:
        """Read a path's state without following a final symlink."""
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return cls(ABSENT)
        except OSError:
            return cls(UNKNOWN)
        if stat.S_ISLNK(info.st_mode):
            return cls(SYMLINK, os.fsencode(os.readlink(path)))
        if stat.S_ISDIR(info.st_mode):
            return cls(DIR, None, stat.S_IMODE(info.st_mode))
        if stat.S_ISREG(info.st_mode) and info.st_size <= keep_limit:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                return cls(UNKNOWN)
            with os.fdopen(fd, "rb") as handle:
                return cls(FILE, handle.read(), stat.S_IMODE(info.st_mode))
        return cls(UNKNOWN, None, stat.S_IMODE(info.st_mode))
