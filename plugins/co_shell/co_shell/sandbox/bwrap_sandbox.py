"""The bubblewrap backend: no daemon, a fresh namespace per command.

The system directories are mounted read-only, the workspace read-write at
``/workspace`` except what git or Co would run from (every ``.git`` and ``.co``, hooks
folders, ...: read-only, see ``protect``); a command run read-only (``read_only=True``:
only a read-only preset allowed it) gets the whole workspace and ``/dev`` read-only, a
private
``/tmp``, no network (unless allowed), no host home directories, a new PID namespace
in which the command is PID 1 (``--as-pid-1``: when it exits, the kernel ends everything
else in the sandbox before bwrap returns; on timeout it is killed first, with the same
effect), a minimal environment. Limits come from
a cgroup where Co may create one (pids, memory, CPU), otherwise from rlimits (address
space, process count); the timeout kills the whole sandbox. When Co runs as root, the
command runs as uid 1000 instead.

The limits are put on from outside: bwrap says its sandbox's pid (``--info-fd``) and
holds it just before the command (``--block-fd``) while Co moves it into the cgroup and
sets its rlimits (``prlimit``), then lets it go (:class:`_Door`). Nothing of the command
runs before; and no Python runs in the child (a ``preexec_fn`` makes CPython fork the
whole of Co and run its at-fork handlers there, a millisecond or more a command). Where
Co may not set another process's rlimits, it sets them in the child as before.

With a cgroup, that move (slow on cgroup v1: an RCU grace period, 5 to 12 ms) is made
ahead of the command: after each command (or in ``prepare``) the next one's bwrap is
started as a :class:`~co_shell.sandbox.standby.Standby`, moved into the cgroup and
limited while nothing waits, and at run time it is only given its command line
(:class:`_Spare`). A command that comes while it is still being made goes the way above.
"""

from __future__ import annotations

import functools
import json
import os
import resource
import selectors
import shutil
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from co_shell.sandbox import keeper, protect
from co_shell.sandbox.base import (
    READING_ENV,
    WORKDIR,
    CommandResult,
    SandboxError,
    SandboxUnavailable,
    minimal_env,
    sandbox_ids,
    with_refusals,
)
from co_shell.sandbox.cgroups import Cgroup
from co_shell.sandbox.process import (
    collect,
    count_processes,
    kill_group,
    limiter,
    parse_size,
    run_process,
)
from co_shell.sandbox.standby import LOST, Standby
from co_shell.settings import ShellSettings

SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"]

FIX = (
    "install bubblewrap (`apt install bubblewrap`) and allow unprivileged user namespaces "
    "(`sysctl kernel.unprivileged_userns_clone=1`, or the AppArmor "
    "`kernel.apparmor_restrict_unprivileged_userns=0`), or set shell.sandbox to docker"
)


@functools.lru_cache(maxsize=1)
def _system_mounts() -> tuple[str, ...]:
    args: list[str] = []
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    return tuple(args)


def _shorten(text: str, width: int) -> str:
    """On one line, cut at a word (never mid-word) when long."""
    import textwrap

    return textwrap.shorten(text, width, placeholder=" …")


@functools.lru_cache(maxsize=4)
def probe(uid: int, gid: int) -> str | None:
    """None if bubblewrap works here, else why not."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bwrap is not installed"
    if shutil.which("bash") is None:
        return "bash is not installed (Co runs commands with bash: apt install bash)"
    cmd = [exe, "--unshare-all", "--die-with-parent", *_system_mounts(), "--", "true"]
    ids = {"user": uid, "group": gid, "extra_groups": []} if os.getuid() == 0 else {}
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=10, **ids)  # type: ignore[call-overload]
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not run: {exc}"
    if done.returncode != 0:
        return f"bwrap failed: {_shorten(done.stderr.decode(errors='replace'), 300)}"
    return None


class _Door:
    """bwrap's two pipes around the moment its sandbox exists: ``--info-fd`` says the
    sandbox's first process id, ``--block-fd`` holds that process just before it runs the
    command until Co lets it go (one byte). Closing Co's end lets it go too, so it is
    closed only after the sandbox was let go or killed. Without ``block`` (the limits are
    on already), only the first."""

    def __init__(self, block: bool = True) -> None:
        self.info_read, self.info_write = os.pipe()
        self._open = [self.info_read, self.info_write]
        self.block_read = self.block_write = -1
        if block:
            self.block_read, self.block_write = os.pipe()
            self._open += [self.block_read, self.block_write]
        self.child: int | None = None

    def fds(self) -> tuple[int, ...]:
        """What bwrap is given."""
        return tuple(fd for fd in (self.info_write, self.block_read) if fd >= 0)

    def handed_over(self) -> None:
        """bwrap has its copies: Co's are closed (so bwrap's ending is seen)."""
        self._close(self.info_write)
        self._close(self.block_read)

    def _close(self, fd: int) -> None:
        if fd in self._open:
            self._open.remove(fd)
            os.close(fd)

    def wait_child(self, deadline: float) -> int | None:
        """The sandbox's pid once bwrap made it; None if bwrap ended (or took until the
        deadline) without making one."""
        self.handed_over()
        data = b""
        with selectors.DefaultSelector() as sel:  # select() fails on descriptors past 1023
            sel.register(self.info_read, selectors.EVENT_READ)
            while True:
                ready = sel.select(max(0.0, deadline - time.perf_counter()))
                chunk = os.read(self.info_read, 65536) if ready else b""
                data += chunk
                try:
                    pid = json.loads(data).get("child-pid")
                except ValueError:
                    pid = None
                    if chunk:
                        continue  # not all of it yet
                self.child = pid if isinstance(pid, int) else None
                return self.child

    def let_go(self) -> None:
        os.write(self.block_write, b"\0")
        self._close(self.block_write)

    def close(self) -> None:
        for fd in list(self._open):
            self._close(fd)


class _Stopper:
    """Ends a running sandbox from the inside out: SIGKILL to its PID 1.

    The kernel then kills everything else in the sandbox's PID namespace before bwrap
    sees its child exit, so when bwrap returns, nothing of the command is left. (Killing
    bwrap instead would end the sandbox too, through ``--die-with-parent``, but only
    after bwrap had returned.)
    """

    def __init__(self, door: _Door) -> None:
        self.door = door

    def __call__(self, proc: subprocess.Popen[bytes]) -> None:
        child = self.door.child
        # while bwrap runs, its child is not reaped, so the pid is still the sandbox's
        if child is not None and proc.poll() is None:
            try:
                os.kill(child, signal.SIGKILL)
                return
            except (ProcessLookupError, PermissionError):
                pass
        kill_group(proc)  # not started yet: --die-with-parent ends the rest


class _NotPermitted(Exception):
    """Co may not set the held sandbox's rlimits from outside (see ``_Limits.put_on``)."""


class _Lost(Exception):
    """The standby ended before it made a sandbox: nothing of the command ran."""


class _CgroupLost(SandboxError):
    """The sandbox's cgroup could not be joined (removed behind Co's back)."""


@dataclass(frozen=True)
class _Limits:
    """What a command is held to: its cgroup, or rlimits where there is none."""

    cgroup: Cgroup | None
    memory: int | None  # address space, when no cgroup caps memory
    nproc: int | None  # processes of the user, when no cgroup caps them

    def rlimits(self) -> list[tuple[int, int]]:
        found = [(resource.RLIMIT_AS, self.memory), (resource.RLIMIT_NPROC, self.nproc)]
        return [(kind, value) for kind, value in found if value] + [(resource.RLIMIT_CORE, 0)]

    def put_on(self, pid: int) -> None:
        """On the held sandbox, from outside; _NotPermitted when Co may not set its
        rlimits (root without CAP_SYS_RESOURCE: the sandbox runs as another uid)."""
        try:
            if self.cgroup is not None:
                self.cgroup.join(pid)
        except OSError as exc:
            raise _CgroupLost(
                f"the command was not run: its cgroup could not be joined ({exc.strerror}); "
                "the next command gets a new one"
            ) from exc
        for kind, value in self.rlimits():
            try:
                resource.prlimit(pid, kind, (value, value))
            except PermissionError as exc:
                # no core dumps: a soft limit of 0, as Co's own, is inherited and enough
                if kind == resource.RLIMIT_CORE and resource.getrlimit(kind)[0] == 0:
                    continue
                raise _NotPermitted() from exc


@dataclass(frozen=True)
class _Ready:
    """A standby for the next command: in ``cgroup`` with its limits on, its door open."""

    standby: Standby
    door: _Door
    cgroup: Cgroup


class _Spare:
    """The next command's standby, made in the background after a command (or in
    ``prepare``): what it costs (a process started, moved into the cgroup) is paid
    while nothing waits. One at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._ready: _Ready | None = None

    def make(self, factory: Callable[[], _Ready]) -> None:
        with self._lock:
            if self._thread is not None or self._ready is not None:
                return
            thread = threading.Thread(
                target=self._make, args=(factory,), name="co-bwrap-standby", daemon=True
            )
            self._thread = thread
        thread.start()

    def _make(self, factory: Callable[[], _Ready]) -> None:
        try:
            ready: _Ready | None = factory()
        except Exception:  # the next command goes the usual way, and meets the error there
            ready = None
        with self._lock:
            self._ready = ready

    def take(self, wait: bool = True) -> _Ready | None:
        """The standby; one still being made is waited for, or (not ``wait``) left to be
        made for a later command: waiting for it costs more than going without it (its
        move into the cgroup, which without it overlaps with bwrap's own set-up)."""
        with self._lock:
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            if not wait and thread.is_alive():
                return None
            thread.join()
        with self._lock:
            self._thread = None
            ready, self._ready = self._ready, None
        return ready

    def discard(self) -> None:
        ready = self.take()
        if ready is not None:
            ready.standby.discard()
            ready.door.close()


def _shut(spare: _Spare, cgroup: Cgroup) -> None:
    """The standby ends first: a cgroup with a process in it cannot be removed."""
    spare.discard()
    cgroup.remove()


class BubblewrapSandbox:
    name = "bubblewrap"
    workdir = WORKDIR
    ahead = True  # each command's bwrap started ahead of it (a standby); False: at run time

    def __init__(self, settings: ShellSettings, workspace: Path) -> None:
        self.settings = settings
        self.workspace = Path(os.path.realpath(workspace))
        self.uid, self.gid = sandbox_ids()
        problem = probe(self.uid, self.gid)
        if problem:
            raise SandboxUnavailable(f"bubblewrap sandbox unavailable: {problem}; {FIX}")
        self.exe = shutil.which("bwrap") or "bwrap"
        self.bash = shutil.which("bash") or "/bin/bash"
        self._spare = _Spare()
        self._cgroup: Cgroup | None = None
        self._cgroup_tried = False
        self._watched = False  # the keeper knows the workspace (placeholders may be made)
        self._from_outside = True  # limits set on the held sandbox, until Co may not
        if os.getuid() == 0:
            self._check_access()

    def _check_access(self) -> None:
        """Running as root, commands run as uid 1000: it must be able to reach the workspace."""
        done = subprocess.run(
            self.argv(["true"]),
            capture_output=True,
            timeout=10,
            user=self.uid,
            group=self.gid,
            extra_groups=[],
        )
        if done.returncode != 0:
            detail = _shorten(done.stderr.decode(errors="replace"), 200)
            detail = detail.replace(str(self.workspace), "the workspace")
            raise SandboxUnavailable(
                f"bubblewrap: Co runs as root, so commands run as uid {self.uid}, which cannot "
                f"use the workspace folder ({detail}); make the folder and its parents "
                "accessible to that user, or run Co as a normal user"
            )

    def argv(
        self,
        command: list[str],
        read_only: tuple[str, ...] = (),
        door: _Door | None = None,
        *,
        reading: bool = False,
    ) -> list[str]:
        """The whole bwrap command line; ``read_only`` names workspace entries bound read-only.

        ``door``: where bwrap says the sandbox's first process id and waits to be let go.
        ``reading``: the workspace too is bound read-only, and ``/dev`` remounted so (its
        devices, ``/dev/null`` included, still work): ``/tmp`` is the one writable place.
        """
        net = ["--share-net"] if self.settings.network else []
        env: list[str] = []
        for key, value in minimal_env(READING_ENV if reading else None).items():
            env += ["--setenv", key, value]
        guarded: list[str] = []
        for name in read_only:
            guarded += ["--ro-bind", str(self.workspace / name), f"{WORKDIR}/{name}"]
        if reading:
            workspace = ["--ro-bind", str(self.workspace), WORKDIR]
            sealed = ["--remount-ro", "/dev"]
        else:
            workspace = ["--bind", str(self.workspace), WORKDIR]
            sealed = []
        info = []
        if door is not None:
            info = ["--info-fd", str(door.info_write)]
            if door.block_read >= 0:
                info += ["--block-fd", str(door.block_read)]
        return [
            self.exe,
            "--unshare-all",
            *net,
            "--die-with-parent",
            "--new-session",
            "--as-pid-1",
            *info,
            *_system_mounts(),
            "--proc", "/proc",
            "--dev", "/dev",
            "--tmpfs", "/tmp",
            *workspace,
            *guarded,
            "--remount-ro", "/",
            *sealed,
            "--chdir", WORKDIR,
            "--hostname", "co-sandbox",
            "--clearenv",
            *env,
            "--",
            *command,
        ]  # fmt: skip

    def _watch(self) -> None:
        """Tell the keeper, before the first cgroup or placeholder: whatever this sandbox
        leaves goes even if Co is killed."""
        if not self._watched:
            keeper.watch(self.workspace)
            self._watched = True

    def _group(self) -> Cgroup | None:
        """One cgroup for this sandbox's commands, made on first use, removed on close."""
        if not self._cgroup_tried:
            s = self.settings
            self._watch()  # a cgroup outlives a Co killed before its first command
            self._cgroup = Cgroup.create(parse_size(s.memory), s.cpus, s.pids)
            self._cgroup_tried = True
            if self._cgroup is not None:  # removed even if close() is never called
                weakref.finalize(self, _shut, self._spare, self._cgroup)
        return self._cgroup

    def run(
        self,
        argv: list[str],
        timeout: float | None = None,
        cancel: threading.Event | None = None,
        *,
        read_only: bool = False,
    ) -> CommandResult:
        timeout = timeout or self.settings.timeout
        s = self.settings
        cgroup = self._group()
        # with a cgroup, memory is capped there (OOM kill) instead of by address space
        limits = _Limits(
            cgroup,
            None if cgroup else parse_size(s.memory),
            None if cgroup else count_processes(self.uid) + s.pids,
        )
        self._watch()
        with protect.one_at_a_time(self.workspace):
            # read-only: the whole workspace is, so nothing needs holding or refusing
            held = protect.Held((), ()) if read_only else protect.hold(self.workspace)
            run = functools.partial(self._run, argv, held, timeout, limits, cancel, read_only)
            try:
                try:
                    result = self._run_ready(argv, held, timeout, limits, cancel, read_only)
                    if result is None:
                        result = run(self._from_outside)
                except _NotPermitted:  # nothing of the command ran: it was held
                    self._from_outside = False
                    result = run(False)
                except _CgroupLost:
                    self._cgroup, self._cgroup_tried = None, False
                    raise
            finally:
                # nothing of it runs now
                refused = [] if read_only else protect.refuse_new(self.workspace, held)
                protect.release(self.workspace)
        self._make_spare(limits)
        return with_refusals(result, refused)

    def _make_spare(self, limits: _Limits) -> None:
        """Start the next command's standby, where it saves the move into a cgroup (with
        none, there is nothing slow to do ahead of time)."""
        factory = self._standby_factory(limits)
        if factory is not None:
            self._spare.make(factory)

    def _standby_factory(self, limits: _Limits) -> Callable[[], _Ready] | None:
        """How to make a standby for commands under ``limits``; None where none is used
        (no cgroup, limits set inside the child, or ``ahead`` off)."""
        cgroup = limits.cgroup
        if cgroup is None or cgroup is not self._cgroup or not self._from_outside:
            return None
        if not self.ahead:
            return None
        root = os.getuid() == 0
        # what the thread needs, not the sandbox: it must not keep it alive (its finalizer
        # would then run in that thread and wait for it)
        bash, cwd = self.bash, str(self.workspace)
        user, group = (self.uid, self.gid) if root else (None, None)

        def factory() -> _Ready:
            door = _Door(block=False)
            try:
                standby = Standby(
                    bash,
                    env=minimal_env(),
                    cwd=cwd,
                    pass_fds=door.fds(),
                    user=user,
                    group=group,
                    ready=limits.put_on,
                )
            except BaseException:
                door.close()
                raise
            door.handed_over()
            return _Ready(standby, door, cgroup)

        return factory

    def _run_ready(
        self,
        argv: list[str],
        held: protect.Held,
        timeout: float,
        limits: _Limits,
        cancel: threading.Event | None,
        reading: bool,
    ) -> CommandResult | None:
        """The command in the standby made for it, timed from now; None (nothing run) if
        there is none fit for it.

        A standby still being made is waited for, and with none one is made here: its
        bash waits for Co's token before it starts bwrap, so a Co killed meanwhile runs
        nothing. (Held at bwrap's ``--block-fd`` instead, a Co killed before letting go
        closes the fd, bwrap reads that as go, and the command runs outside its cgroup.)"""
        cgroup = limits.cgroup
        ready = self._spare.take(wait=True)
        if ready is None and (factory := self._standby_factory(limits)) is not None:
            try:
                ready = factory()
            except Exception:  # the usual way, which meets the error there
                ready = None
        if ready is None:
            return None
        door = ready.door
        try:
            fit = ready.cgroup is cgroup and self._from_outside
            started = time.perf_counter()
            if not fit or not ready.standby.launch(
                self.argv(argv, held.names, door, reading=reading)
            ):
                ready.standby.discard()
                return None
            deadline = started + timeout

            def on_start(proc: subprocess.Popen[bytes]) -> None:
                if door.wait_child(deadline) is None:  # bwrap failed (its output says why)
                    try:
                        code = proc.wait(max(0.0, deadline - time.perf_counter()))
                    except subprocess.TimeoutExpired:
                        raise SandboxError("bubblewrap did not start the sandbox in time") from None
                    if code < 0 or code == LOST:  # killed, or bash ran nothing: no sandbox
                        raise _Lost()

            try:
                return collect(
                    ready.standby.proc,
                    started=started,
                    timeout=timeout,
                    output_limit=self.settings.output_limit,
                    stop=_Stopper(door),
                    cancel=cancel,
                    on_start=on_start,
                )
            except _Lost:  # ended behind Co's back before it made a sandbox
                return None
        finally:
            door.close()

    def _run(
        self,
        argv: list[str],
        held: protect.Held,
        timeout: float,
        limits: _Limits,
        cancel: threading.Event | None,
        reading: bool,
        from_outside: bool,
    ) -> CommandResult:
        """One sandbox; its limits put on from outside while it is held, or else (the
        old way, slower) by the child itself before it runs bwrap."""
        root = os.getuid() == 0
        door = _Door()
        deadline = time.perf_counter() + timeout

        def on_start(proc: subprocess.Popen[bytes]) -> None:
            child = door.wait_child(deadline)
            if child is None:  # bwrap failed before making one (its output says why)
                try:
                    proc.wait(max(0.0, deadline - time.perf_counter()))
                except subprocess.TimeoutExpired:
                    raise SandboxError("bubblewrap did not start the sandbox in time") from None
                return
            if from_outside:
                limits.put_on(child)
            door.let_go()

        preexec = None
        if not from_outside:
            drop = (self.uid, self.gid) if root else None
            preexec = limiter(limits.memory, limits.nproc, cgroup=limits.cgroup, ids=drop)
        try:
            return run_process(
                self.argv(argv, held.names, door, reading=reading),
                env=minimal_env(),
                cwd=str(self.workspace),
                timeout=timeout,
                output_limit=self.settings.output_limit,
                preexec=preexec,
                stop=_Stopper(door),
                pass_fds=door.fds(),
                cancel=cancel,
                on_start=on_start,
                # bwrap gives the sandbox a session of its own (--new-session); one for
                # bwrap too would be a new scheduler autogroup: slower on a busy machine
                new_session=False,
                user=self.uid if root and from_outside else None,
                group=self.gid if root and from_outside else None,
            )
        finally:
            door.close()

    def prepare(self, *, read_only: bool = False) -> None:
        """The first command's standby (every command gets its own namespaces)."""
        cgroup = self._group()
        if cgroup is not None:
            self._make_spare(_Limits(cgroup, None, None))

    def close(self) -> None:
        """End the standby, remove the cgroup; nothing else lingers (every command had its
        own namespaces)."""
        self._spare.discard()
        if self._cgroup is not None:
            self._cgroup.remove()
        self._cgroup, self._cgroup_tried = None, False
        if self._watched:  # every command removed its placeholders
            keeper.cleaned(self.workspace)
            self._watched = False
