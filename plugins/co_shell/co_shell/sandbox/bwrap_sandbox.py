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
"""

from __future__ import annotations

import functools
import json
import os
import resource
import select
import shutil
import signal
import subprocess
import threading
import time
import weakref
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
    count_processes,
    kill_group,
    limiter,
    parse_size,
    run_process,
)
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
    closed only after the sandbox was let go or killed."""

    def __init__(self) -> None:
        self.info_read, self.info_write = os.pipe()
        self.block_read, self.block_write = os.pipe()
        self._open = [self.info_read, self.info_write, self.block_read, self.block_write]
        self.child: int | None = None

    def _close(self, fd: int) -> None:
        if fd in self._open:
            self._open.remove(fd)
            os.close(fd)

    def wait_child(self, deadline: float) -> int | None:
        """The sandbox's pid once bwrap made it; None if bwrap ended (or took until the
        deadline) without making one."""
        self._close(self.info_write)  # bwrap's copies only, from here on
        self._close(self.block_read)
        data = b""
        while True:
            ready, _, _ = select.select([self.info_read], [], [], deadline - time.perf_counter())
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


class BubblewrapSandbox:
    name = "bubblewrap"
    workdir = WORKDIR

    def __init__(self, settings: ShellSettings, workspace: Path) -> None:
        self.settings = settings
        self.workspace = Path(os.path.realpath(workspace))
        self.uid, self.gid = sandbox_ids()
        problem = probe(self.uid, self.gid)
        if problem:
            raise SandboxUnavailable(f"bubblewrap sandbox unavailable: {problem}; {FIX}")
        self.exe = shutil.which("bwrap") or "bwrap"
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
            info = ["--info-fd", str(door.info_write), "--block-fd", str(door.block_read)]
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

    def _group(self) -> Cgroup | None:
        """One cgroup for this sandbox's commands, made on first use, removed on close."""
        if not self._cgroup_tried:
            s = self.settings
            self._cgroup = Cgroup.create(parse_size(s.memory), s.cpus, s.pids)
            self._cgroup_tried = True
            if self._cgroup is not None:  # removed even if close() is never called
                weakref.finalize(self, self._cgroup.remove)
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
        if not self._watched:  # before the first placeholder: gone even if Co is killed
            keeper.watch(self.workspace)
            self._watched = True
        with protect.one_at_a_time(self.workspace):
            # read-only: the whole workspace is, so nothing needs holding or refusing
            held = protect.Held((), ()) if read_only else protect.hold(self.workspace)
            run = functools.partial(self._run, argv, held, timeout, limits, cancel, read_only)
            try:
                try:
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
            return with_refusals(result, refused)

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
                pass_fds=(door.info_write, door.block_read),
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
        """Nothing to start: every command gets its own namespaces."""

    def close(self) -> None:
        """Remove the cgroup; nothing else lingers (every command had its own namespaces)."""
        if self._cgroup is not None:
            self._cgroup.remove()
        self._cgroup, self._cgroup_tried = None, False
        if self._watched:  # every command removed its placeholders
            keeper.cleaned(self.workspace)
            self._watched = False
