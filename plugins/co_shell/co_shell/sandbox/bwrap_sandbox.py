"""The bubblewrap backend: no daemon, a fresh namespace per command.

The system directories are mounted read-only, the workspace read-write at
``/workspace``, a private ``/tmp``, no network (unless allowed), no host home
directories, a new PID namespace (everything dies with the command), a minimal
environment. Limits are rlimits: address space (``memory``), process count (``pids`` on
top of what the user already runs) and the per-command timeout. When Co runs as root,
the command runs as uid 1000 instead.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from co_shell.sandbox.base import (
    WORKDIR,
    CommandResult,
    SandboxUnavailable,
    minimal_env,
    sandbox_ids,
)
from co_shell.sandbox.cgroups import Cgroup
from co_shell.sandbox.process import count_processes, limiter, parse_size, run_process
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


@functools.lru_cache(maxsize=4)
def probe(uid: int, gid: int) -> str | None:
    """None if bubblewrap works here, else why not."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bwrap is not installed"
    cmd = [exe, "--unshare-all", "--die-with-parent", *_system_mounts(), "--", "true"]
    ids = {"user": uid, "group": gid, "extra_groups": []} if os.getuid() == 0 else {}
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=10, **ids)  # type: ignore[call-overload]
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not run: {exc}"
    if done.returncode != 0:
        return f"bwrap failed: {done.stderr.decode(errors='replace').strip()[:300]}"
    return None


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

    def argv(self, command: list[str]) -> list[str]:
        net = ["--share-net"] if self.settings.network else []
        env: list[str] = []
        for key, value in minimal_env().items():
            env += ["--setenv", key, value]
        return [
            self.exe,
            "--unshare-all",
            *net,
            "--die-with-parent",
            "--new-session",
            *_system_mounts(),
            "--proc", "/proc",
            "--dev", "/dev",
            "--tmpfs", "/tmp",
            "--bind", str(self.workspace), WORKDIR,
            "--remount-ro", "/",
            "--chdir", WORKDIR,
            "--hostname", "co-sandbox",
            "--clearenv",
            *env,
            "--",
            *command,
        ]  # fmt: skip

    def run(self, argv: list[str], timeout: float | None = None) -> CommandResult:
        timeout = timeout or self.settings.timeout
        s = self.settings
        memory = parse_size(s.memory)
        cgroup = Cgroup.create(memory, s.cpus, s.pids)
        nproc = count_processes(self.uid) + s.pids
        drop = (self.uid, self.gid) if os.getuid() == 0 else None
        try:
            return run_process(
                self.argv(argv),
                env=minimal_env(),
                cwd=str(self.workspace),
                timeout=timeout,
                output_limit=s.output_limit,
                # with a cgroup, memory is capped there (OOM kill) instead of address space
                preexec=limiter(None if cgroup else memory, nproc, cgroup=cgroup, ids=drop),
            )
        finally:
            if cgroup is not None:
                cgroup.remove()

    def close(self) -> None:
        """Nothing lingers: every command had its own namespace."""
