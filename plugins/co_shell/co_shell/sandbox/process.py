"""Run a local process with a deadline, a capped output and resource limits.

Shared by the bubblewrap and the host backends. The process gets its own session (or,
for bubblewrap, process group), and its process group is killed when it returns or
times out (bubblewrap's PID namespace does the rest: when the command ends, so does
everything in it); rlimits cap memory (address space), the number of processes (the
user's current count plus ``pids``), file size and core dumps.
"""

from __future__ import annotations

import os
import resource
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from co_shell.sandbox.base import CommandResult, OutputCap, SandboxError

IO_GRACE = 2.0  # after the command exits, for children still writing
STOP_GRACE = 5.0  # after a stop, for the process to finish ending


def parse_size(text: str) -> int:
    """Docker-style sizes: ``512m``, ``2g``, ``1048576``."""
    text = text.strip().lower().removesuffix("b")
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def count_processes(uid: int) -> int:
    """How many processes ``uid`` owns now (RLIMIT_NPROC counts all of them)."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid == uid:
                count += 1
        except OSError:
            continue
    return count


def limiter(
    memory: int | None,
    nproc: int | None,
    *,
    cgroup: Any = None,
    ids: tuple[int, int] | None = None,
) -> Callable[[], None]:
    """What the child does before exec: join the cgroup, set rlimits, drop to ``ids``."""

    def apply() -> None:
        if cgroup is not None:
            cgroup.join()
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        if nproc:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if ids is not None:
            os.setgroups([])
            os.setgid(ids[1])
            os.setuid(ids[0])

    return apply


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process's group (it leads one: its own session, or group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


Stop = Callable[["subprocess.Popen[bytes]"], None]


def wait_until(
    proc: subprocess.Popen[bytes], deadline: float, cancel: threading.Event | None = None
) -> int | None:
    """The exit code, or None if the process still runs at the deadline (or once
    ``cancel`` is set: looked at every 50 ms).

    Waits on the process's pidfd, so it returns the moment the process ends;
    ``Popen.wait(timeout)`` polls instead, with sleeps that grow to 50 ms.
    """
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # before Linux 5.3, or already reaped
        fd = None
    try:
        with selectors.DefaultSelector() as sel:
            if fd is not None:
                sel.register(fd, selectors.EVENT_READ)
            while cancel is None or not cancel.is_set():
                left = max(0.0, deadline - time.perf_counter())
                step = left if cancel is None else min(left, 0.05)
                if fd is None:
                    try:
                        return proc.wait(step)
                    except subprocess.TimeoutExpired:
                        pass
                elif sel.select(step):
                    return proc.wait()
                if step >= left:
                    return None
            return None
    finally:
        if fd is not None:
            os.close(fd)


def _pump(
    proc: subprocess.Popen[bytes],
    cap: OutputCap,
    deadline: float,
    stop: Stop,
    cancel: threading.Event | None = None,
) -> bool:
    """Read output until EOF; ``stop`` the process at the deadline, or as soon as
    ``cancel`` is set. True if it timed out.

    One thread and ``select``: no polling sleeps, so a fast command returns fast. After
    the command exits, children still holding the pipe get ``IO_GRACE`` seconds.
    """
    fd = proc.stdout.fileno()  # type: ignore[union-attr]
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        exited_at: float | None = None
        while True:
            now = time.perf_counter()
            limit = deadline if exited_at is None else min(deadline, exited_at + IO_GRACE)
            if cancel is not None and cancel.is_set():
                stop(proc)
                kill_group(proc)
                return False
            if now >= limit:
                timed_out = proc.poll() is None
                stop(proc)
                kill_group(proc)
                return timed_out
            wait = min(limit - now, 0.05 if exited_at is None else limit - now)
            if sel.select(wait):
                chunk = os.read(fd, 65536)
                if not chunk:
                    return False
                cap.feed(chunk)
            elif exited_at is None and proc.poll() is not None:
                exited_at = time.perf_counter()


def spawn(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str,
    preexec: Callable[[], None] | None = None,
    user: int | None = None,
    group: int | None = None,
    pass_fds: tuple[int, ...] = (),
    new_session: bool = True,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` with no input and its output (and errors) on one pipe (see
    :func:`run_process`)."""
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=new_session,
            process_group=None if new_session else 0,
            preexec_fn=preexec,
            user=user,
            group=group,
            extra_groups=[] if user is not None else None,
            close_fds=True,
            pass_fds=pass_fds,
        )
    except OSError as exc:
        raise SandboxError(f"could not start {argv[0]}: {exc.strerror or exc}") from exc


def run_process(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str,
    timeout: float,
    output_limit: int,
    preexec: Callable[[], None] | None = None,
    user: int | None = None,
    group: int | None = None,
    stop: Stop = kill_group,
    pass_fds: tuple[int, ...] = (),
    cancel: threading.Event | None = None,
    on_start: Stop | None = None,
    new_session: bool = True,
) -> CommandResult:
    """Run ``argv``; ``stop`` ends it at the deadline, or once ``cancel`` is set (by
    default: kill its process group).

    ``on_start`` is called once the process exists, before its output is read (e.g. to put
    limits on it from outside); if it raises, the process is stopped and the error raised.
    ``new_session``: the process leads a session of its own (no terminal to read from),
    else only a process group (enough to kill what it started, for bubblewrap, whose
    sandbox makes its own session).
    """
    started = time.perf_counter()
    proc = spawn(
        argv,
        env=env,
        cwd=cwd,
        preexec=preexec,
        user=user,
        group=group,
        pass_fds=pass_fds,
        new_session=new_session,
    )
    return collect(
        proc,
        started=started,
        timeout=timeout,
        output_limit=output_limit,
        stop=stop,
        cancel=cancel,
        on_start=on_start,
    )


def collect(
    proc: subprocess.Popen[bytes],
    *,
    started: float,
    timeout: float,
    output_limit: int,
    stop: Stop = kill_group,
    cancel: threading.Event | None = None,
    on_start: Stop | None = None,
) -> CommandResult:
    """Read a started process's output and wait for it, ``timeout`` seconds from
    ``started`` (when its command was started: a process started ahead of time, kept
    waiting for its command, counts from the command), or until ``cancel`` is set."""
    assert proc.stdout is not None
    if on_start is not None:
        try:
            on_start(proc)
        except BaseException:
            stop(proc)
            kill_group(proc)
            proc.wait()
            proc.stdout.close()
            raise
    cap = OutputCap(output_limit)
    deadline = started + timeout
    timed_out = _pump(proc, cap, deadline, stop, cancel)
    # output closed early (``exec >&-``) does not mean the command ended
    code = wait_until(proc, deadline, cancel)
    if code is None:
        timed_out = cancel is None or not cancel.is_set()
        stop(proc)
        code = wait_until(proc, time.perf_counter() + STOP_GRACE)
    kill_group(proc)  # whatever the command left in its process group ends with it
    if code is None:
        code = proc.wait()
    proc.stdout.close()
    return CommandResult(
        exit_code=code if code >= 0 else 128 - code,
        output=cap.text(),
        cut=cap.cut,
        timed_out=timed_out,
        seconds=time.perf_counter() - started,
        cancelled=cancel is not None and cancel.is_set(),
    )
