"""Per-command cgroups for the bubblewrap backend, where Co may create them.

With a writable cgroup hierarchy (v2, or v1 ``pids``/``memory``/``cpu``; usually only
as root) a command gets its own cgroup: ``pids.max`` (fork bombs), a memory limit that
OOM-kills like Docker does, and a CPU quota. Elsewhere the backend falls back to
rlimits, which cannot cap CPU share.

A cgroup's name says which Co made it (``co-sandbox-PID.START-RANDOM``: pid and start
time, so a reused pid is not mistaken for it). Co removes its cgroups when it ends, also
on SIGTERM or a closed terminal; one left by a Co that was killed outright is removed by
the next Co that makes one (:func:`reap`), after ending whatever still runs in it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from pathlib import Path

from co_core import ProcessId

ROOT = Path("/sys/fs/cgroup")
CPU_PERIOD = 100_000
PREFIX = "co-sandbox-"
_reaped = False  # once per process: what a dead Co left does not come back


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


class Cgroup:
    """One command's cgroup; ``join`` runs in the child before exec, ``remove`` after."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = folders
        self._procs = [str(folder / "cgroup.procs") for folder in folders]

    @classmethod
    def create(cls, memory: int, cpus: float, pids: int) -> Cgroup | None:
        """A limited cgroup, or None when this system does not let us make one."""
        global _reaped
        if not _reaped:
            _reaped = True
            reap()
        name = f"{PREFIX}{ProcessId.me().token()}-{secrets.token_hex(3)}"
        made: list[Path] = []
        try:
            if (ROOT / "cgroup.controllers").exists():
                made.append(ROOT / name)
                cls._v2(ROOT / name, memory, cpus, pids)
            else:
                for controller in ("pids", "memory", "cpu"):
                    folder = ROOT / controller / name
                    made.append(folder)
                    folder.mkdir()
                cls._v1(made, memory, cpus, pids)
        except OSError:
            Cgroup(made).remove()
            return None
        return cls(made)

    @staticmethod
    def _v2(folder: Path, memory: int, cpus: float, pids: int) -> None:
        enabled = (folder.parent / "cgroup.subtree_control").read_text().split()
        missing = [c for c in ("pids", "memory", "cpu") if c not in enabled]
        if missing:
            _write(folder.parent / "cgroup.subtree_control", " ".join(f"+{c}" for c in missing))
        folder.mkdir()
        _write(folder / "pids.max", str(pids))
        _write(folder / "memory.max", str(memory))
        if (folder / "memory.swap.max").exists():
            _write(folder / "memory.swap.max", "0")
        _write(folder / "cpu.max", f"{int(cpus * CPU_PERIOD)} {CPU_PERIOD}")

    @staticmethod
    def _v1(folders: list[Path], memory: int, cpus: float, pids: int) -> None:
        pid_dir, mem_dir, cpu_dir = folders
        _write(pid_dir / "pids.max", str(pids))
        _write(mem_dir / "memory.limit_in_bytes", str(memory))
        if (mem_dir / "memory.memsw.limit_in_bytes").exists():
            with contextlib.suppress(OSError):
                _write(mem_dir / "memory.memsw.limit_in_bytes", str(memory))
        _write(cpu_dir / "cpu.cfs_period_us", str(CPU_PERIOD))
        _write(cpu_dir / "cpu.cfs_quota_us", str(int(cpus * CPU_PERIOD)))

    def join(self, pid: int | None = None) -> None:
        """Move process ``pid`` in (by default the calling one: a child before it drops
        privileges); what it starts from then on is in the cgroup too."""
        member = str(os.getpid() if pid is None else pid).encode()
        for path in self._procs:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, member)
            finally:
                os.close(fd)

    def remove(self) -> None:
        """Delete the cgroup once its processes are gone (they die with the sandbox); one
        still running when its sandbox closes (Co is ending mid-command) is killed."""
        for folder in self.folders:
            for attempt in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if attempt == 5:
                        _kill_members(folder)
                    time.sleep(0.02)


def _owner(name: str) -> ProcessId | None:
    """The Co that made the cgroup ``name`` (older names hold only its pid)."""
    token = name.removeprefix(PREFIX).rpartition("-")[0]
    return ProcessId.parse(token)


def _leftovers() -> dict[str, list[Path]]:
    """Co's cgroups on this machine, by name, each with its folder per hierarchy."""
    parents = (
        [ROOT]
        if (ROOT / "cgroup.controllers").exists()
        else [ROOT / controller for controller in ("pids", "memory", "cpu")]
    )
    found: dict[str, list[Path]] = {}
    for parent in parents:
        try:
            entries = list(parent.iterdir())
        except OSError:
            continue
        for folder in entries:
            if folder.name.startswith(PREFIX) and folder.is_dir():
                found.setdefault(folder.name, []).append(folder)
    return found


def reap(gone: str | None = None) -> list[str]:
    """Remove the cgroups of Co processes that are gone, killing what still runs in them
    (a command of a Co killed with ``kill -9``); returns their names. ``gone``: the token
    of a Co known to have ended (its keeper saw it go), whose process may not be reaped
    yet."""
    removed = []
    for name, folders in _leftovers().items():
        owner = _owner(name)
        if owner is None or (owner.alive() and owner.token() != gone):
            continue
        for folder in folders:
            _kill_members(folder)
        Cgroup(folders).remove()
        if not any(folder.exists() for folder in folders):
            removed.append(name)
    return removed


def _kill_members(folder: Path) -> None:
    kill = folder / "cgroup.kill"  # v2, kernel 5.14+: every process at once
    if kill.exists():
        with contextlib.suppress(OSError):
            _write(kill, "1")
        return
    try:
        pids = (folder / "cgroup.procs").read_text().split()
    except OSError:
        return
    for pid in pids:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pid), 9)


def describe() -> str:
    """How bubblewrap commands are limited on this machine (for ``co status``)."""
    probe = Cgroup.create(64 * 1024 * 1024, 1.0, 16)
    if probe is None:
        return "rlimits (no writable cgroup here, so CPU share is not limited)"
    probe.remove()
    return "cgroup limits on processes, memory and CPU"
