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
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import threading
import weakref
from pathlib import Path

from co_shell.sandbox import keeper, protect
from co_shell.sandbox.base import (
    READING_ENV,
    WORKDIR,
    CommandResult,
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


def _system_mounts() -> list[str]:
    args: list[str] = []
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    return args


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


class _Stopper:
    """Ends a running sandbox from the inside out: SIGKILL to its PID 1.

    The kernel then kills everything else in the sandbox's PID namespace before bwrap
    sees its child exit, so when bwrap returns, nothing of the command is left. (Killing
    bwrap instead would end the sandbox too, through ``--die-with-parent``, but only
    after bwrap had returned.)
    """

    def __init__(self, info_fd: int) -> None:
        self.info_fd = info_fd
        self.child: int | None = None

    def __call__(self, proc: subprocess.Popen[bytes]) -> None:
        if self.child is None:
            self.child = _child_pid(self.info_fd)
        # while bwrap runs, its child is not reaped, so the pid is still the sandbox's
        if self.child is not None and proc.poll() is None:
            try:
                os.kill(self.child, signal.SIGKILL)
                return
            except (ProcessLookupError, PermissionError):
                pass
        kill_group(proc)  # not started yet: --die-with-parent ends the rest


def _child_pid(fd: int) -> int | None:
    """The ``child-pid`` bwrap wrote to its info fd once the sandbox was set up."""
    os.set_blocking(fd, False)
    try:
        info = json.loads(os.read(fd, 65536) or b"{}")
    except (OSError, ValueError):
        return None
    pid = info.get("child-pid")
    return pid if isinstance(pid, int) else None


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
        info_fd: int | None = None,
        *,
        reading: bool = False,
    ) -> list[str]:
        """The whole bwrap command line; ``read_only`` names workspace entries bound read-only.

        ``info_fd``: where bwrap writes the sandbox's first process id (see ``_Stopper``).
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
        info = ["--info-fd", str(info_fd)] if info_fd is not None else []
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
        nproc = None if cgroup else count_processes(self.uid) + s.pids
        drop = (self.uid, self.gid) if os.getuid() == 0 else None
        # with a cgroup, memory is capped there (OOM kill) instead of by address space
        memory = None if cgroup else parse_size(s.memory)
        if not self._watched:  # before the first placeholder: gone even if Co is killed
            keeper.watch(self.workspace)
            self._watched = True
        with protect.one_at_a_time(self.workspace):
            # read-only: the whole workspace is, so nothing needs holding or refusing
            held = protect.Held((), ()) if read_only else protect.hold(self.workspace)
            info_read, info_write = os.pipe()
            try:
                result = run_process(
                    self.argv(argv, held.names, info_write, reading=read_only),
                    env=minimal_env(),
                    cwd=str(self.workspace),
                    timeout=timeout,
                    output_limit=s.output_limit,
                    preexec=limiter(memory, nproc, cgroup=cgroup, ids=drop),
                    stop=_Stopper(info_read),
                    pass_fds=(info_write,),
                    cancel=cancel,
                )
            finally:
                os.close(info_read)
                os.close(info_write)
                refused = [] if read_only else protect.refuse_new(self.workspace, held)
                protect.release(self.workspace)
            return with_refusals(result, refused)

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
