"""Which process is which: a pid plus its start time, so a reused pid is never mistaken.

Co leaves marks of what it started (a local model server's record, a sandbox cgroup's
name) that say which Co owns them. The next Co reaps what a dead owner left; a pid alone
could name an unrelated process that got the same number, the pair cannot.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


def _start_ticks(pid: int) -> int | None:
    """Field 22 of ``/proc/PID/stat``: when the process started, in clock ticks since boot;
    None when there is no such process, or only its zombie (it has exited)."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces or ")"
    fields = stat[stat.rfind(")") + 2 :].split()
    if not fields or fields[0] in ("Z", "X"):  # fields[0] is field 3, the state
        return None
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return 0


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class ProcessId:
    """One process: ``pid`` and ``started`` (clock ticks since boot; 0 where unknown)."""

    pid: int
    started: int

    @classmethod
    def of(cls, pid: int) -> ProcessId | None:
        """The process running now under ``pid``, or None when there is none."""
        if pid <= 0:
            return None
        if not PROC.is_dir():
            return cls(pid, 0) if _exists(pid) else None
        started = _start_ticks(pid)
        return None if started is None else cls(pid, started)

    @classmethod
    def me(cls) -> ProcessId:
        found = cls.of(os.getpid())
        return found if found is not None else cls(os.getpid(), 0)

    def alive(self) -> bool:
        """Is this very process still running (not a later one with the same pid)?"""
        now = ProcessId.of(self.pid)
        if now is None:
            return False
        return not (self.started and now.started and now.started != self.started)

    def token(self) -> str:
        """``PID.STARTED``: a name part (a cgroup's, a file's) that :meth:`parse` reads back."""
        return f"{self.pid}.{self.started}"

    @classmethod
    def parse(cls, token: str) -> ProcessId | None:
        pid, _, started = token.partition(".")
        try:
            return cls(int(pid), int(started or 0))
        except ValueError:
            return None

    def cmdline(self) -> list[str] | None:
        """The process's arguments (None when it is gone or they cannot be read)."""
        try:
            raw = (PROC / str(self.pid) / "cmdline").read_bytes()
        except OSError:
            return None
        return [part.decode(errors="replace") for part in raw.split(b"\0") if part]
