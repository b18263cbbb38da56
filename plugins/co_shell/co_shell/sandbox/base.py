"""What every sandbox backend shares: results, errors, the minimal environment, output caps.

This layer knows nothing of pydantic-ai: it raises ``SandboxError`` (exit code, output,
whether it timed out) and the tool layer turns that into ``ModelRetry``.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import Protocol

from co_core import CoError

WORKDIR = "/workspace"
# How every backend runs a shell command: ``[*SHELL, cmd]``. Bash, because that is the
# language the policy engine parses commands in; ``sh`` is dash on Debian-based images
# and reads the same text differently.
SHELL = ("bash", "-c")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
FALLBACK_UID = 1000  # used when Co itself runs as root: the sandbox never does
# What a command run read-only gets besides: git then never takes the index's lock to
# refresh it (``git status`` and ``git diff`` would try to write .git/index.lock, and
# fail): no optional locks, and diff.autoRefreshIndex off (as `git -c` would set it).
READING_ENV = {
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "diff.autoRefreshIndex",
    "GIT_CONFIG_VALUE_0": "false",
}


def minimal_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment a sandboxed command gets: nothing from the host leaks in."""
    env = {
        "PATH": PATH,
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    env.update(extra or {})
    return env


def sandbox_ids() -> tuple[int, int]:
    """The uid/gid commands run as: the host user's, or an unprivileged one if that is root."""
    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        return FALLBACK_UID, FALLBACK_UID
    return uid, gid


@dataclass
class CommandResult:
    exit_code: int
    output: str
    cut: int = 0  # bytes left out of ``output``
    timed_out: bool = False
    seconds: float = 0.0
    cancelled: bool = False  # stopped because its call was cancelled (Ctrl+C)


def with_refusals(result: CommandResult, refused: list[str]) -> CommandResult:
    """The result, saying what Co moved aside after the command (see ``protect``)."""
    if not refused:
        return result
    note = (
        "\n[Co moved aside what this command made that git or Co would run on the host: "
        + "; ".join(refused)
        + "]"
    )
    result.output = result.output.rstrip("\n") + note
    return result


class SandboxError(Exception):
    """A command failed (non-zero exit or timeout) or the sandbox broke while running it."""

    def __init__(self, message: str, exit_code: int = -1, output: str = "", timed_out=False):
        super().__init__(message)
        self.exit_code = exit_code
        self.output = output
        self.timed_out = timed_out

    @classmethod
    def from_result(cls, result: CommandResult, timeout: float) -> SandboxError:
        if result.timed_out:
            message = f"command timed out after {timeout:g} s and was killed"
        elif result.cancelled:
            message = "command cancelled by the user and killed"
        else:
            message = f"command exited with code {result.exit_code}"
        return cls(message, result.exit_code, result.output, result.timed_out)


class SandboxUnavailable(CoError):
    """The chosen backend cannot run here; the message says why and how to fix it."""


class Sandbox(Protocol):
    name: str

    def prepare(self, *, read_only: bool = False) -> None:
        """Get ready to run (e.g. start the container) before the workspace is snapshotted;
        ``read_only``: for a command that will run read-only."""
        ...

    def run(
        self,
        argv: list[str],
        timeout: float | None = None,
        cancel: threading.Event | None = None,
        *,
        read_only: bool = False,
    ) -> CommandResult:
        """Run ``argv`` in the workspace; returns even on non-zero exit (see ``check``).

        When it returns, every process the command started has ended: at the timeout, or
        soon after ``cancel`` is set (the call was cancelled), it is killed. ``read_only``:
        the workspace and every other path but ``/tmp`` are read-only for it, and ``/tmp`` is
        emptied after it (a read-only preset allowed it: it must not be able to write).
        """
        ...

    def close(self) -> None: ...


def check(result: CommandResult, timeout: float) -> CommandResult:
    """Raise SandboxError unless the command exited 0 in time."""
    if result.timed_out or result.cancelled or result.exit_code != 0:
        raise SandboxError.from_result(result, timeout)
    return result


class OutputCap:
    """Keeps the head and the tail of a stream within ``limit`` bytes, counting what it cut."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 4
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.cut = 0

    def feed(self, chunk: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        extra = len(self.tail) - self.tail_limit
        if extra > 0:
            del self.tail[:extra]
            self.cut += extra

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if self.cut:
            return f"{head}\n[... {self.cut} bytes of output cut ...]\n{tail}"
        return head + tail


EROFS = "Read-only file system"
_TRIED = (
    re.compile(r"'([^'\n]+)': " + EROFS),  # touch: cannot touch 'x': ...
    re.compile(r"([^\s:'`\"]+)'?: " + EROFS),  # sort: open failed: x: ...
)


def tried_to_write(output: str) -> str | None:
    """What a command run read-only tried to write, as its error says (None: no such
    error). The path is given relative to the workspace where it is inside it."""
    if EROFS not in output:
        return None
    for pattern in _TRIED:
        found = pattern.search(output)
        if found:
            path = found.group(1)
            return path.removeprefix(WORKDIR + "/") if path != WORKDIR else "the workspace"
    return "a file"
