"""A process started ahead of its command: bash, blocked reading the argv it will exec.

Moving a process into a cgroup is slow on cgroup v1 (the kernel waits for an RCU grace
period: 5 to 12 ms for the first write here), and rlimits set from outside need a
process to set them on. A standby is that process, made while nothing waits for it
(after a command, or in ``prepare``): it is started, moved into the cgroup and limited,
then it waits. At run time Co writes the command's whole argv down a pipe (NUL after each
argument, then the standby's own token) and closes it; bash checks the token and execs
the argv, so the command runs with its limits already on and nothing is moved on the
way.

bwrap's ``--args FD`` (its options from a pipe) would not do: it takes options only, and
the command must be on bwrap's own command line, known when bwrap starts.

If Co ends, the pipe closes: bash reads no token and exits, nothing is run. The argv is
written in one ``write`` into an empty pipe large enough for all of it, so it arrives
whole or (Co killed before the write) not at all; a cut one would lack the token.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import signal
from collections.abc import Callable

from co_shell.sandbox.process import spawn

LOST = 125  # its exit code when it runs nothing (no whole argv)
PIPE_SIZE = 1 << 20  # the largest a user may ask for by default (pipe-max-size)


def script(fd: int) -> str:
    """What bash runs: read every argument from ``fd`` (NUL after each), close it (the
    command does not get it), check the last is the token (``$1``), drop it, exec the rest."""
    return (
        f"mapfile -d '' -t a <&{fd} && exec {fd}<&- && "
        f'[[ ${{#a[@]}} -gt 1 && ${{a[-1]}} == "$1" ]] || exit {LOST}; unset "a[-1]"; '
        'exec "${a[@]}"'
    )


class Standby:
    """One process waiting for its argv; ``launch`` gives it, ``discard`` ends it unused."""

    def __init__(
        self,
        bash: str,
        *,
        env: dict[str, str],
        cwd: str,
        pass_fds: tuple[int, ...],
        user: int | None,
        group: int | None,
        ready: Callable[[int], None],
    ) -> None:
        """Start it, then ``ready(pid)`` (e.g. move it into a cgroup, set its rlimits); if
        that raises, the standby is ended and the error raised."""
        self.token = secrets.token_hex(8)
        read, self._write = os.pipe()
        with contextlib.suppress(OSError):
            fcntl.fcntl(self._write, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        self.capacity = fcntl.fcntl(self._write, fcntl.F_GETPIPE_SZ)
        try:
            self.proc = spawn(
                [bash, "-c", script(read), "co-standby", self.token],
                env=env,
                cwd=cwd,
                user=user,
                group=group,
                pass_fds=(read, *pass_fds),
                new_session=False,
            )  # fmt: skip
        except BaseException:
            os.close(self._write)
            raise
        finally:
            os.close(read)
        try:
            ready(self.proc.pid)
        except BaseException:
            self.discard()
            raise

    def alive(self) -> bool:
        return self._write >= 0 and self.proc.poll() is None

    def launch(self, argv: list[str]) -> bool:
        """Give the standby its argv; False (and nothing run) if it cannot take it (too long
        for its pipe, or it has ended): the caller runs the command another way."""
        data = b"".join(os.fsencode(arg) + b"\0" for arg in argv) + self.token.encode() + b"\0"
        if len(data) > self.capacity or not self.alive():
            self.discard()
            return False
        try:
            written = os.write(self._write, data)
        except OSError:  # it ended meanwhile
            written = -1
        self._close()
        if written != len(data):  # without the whole argv, bash runs nothing
            self.discard()
            return False
        return True

    def _close(self) -> None:
        if self._write >= 0:
            os.close(self._write)
            self._write = -1

    def discard(self) -> None:
        """End it unused (its pipe closed, it would exit by itself; killed to be sure)."""
        self._close()
        if self.proc.returncode is None:  # not reaped: the pid is still its own
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
