"""Per-command cgroups for the bubblewrap backend, where Co may create them.

With a writable cgroup hierarchy (v2, or v1 ``pids``/``memory``/``cpu``; usually only
as root) a command gets its own cgroup: ``pids.max`` (fork bombs), a memory limit that
OOM-kills like Docker does, and a CPU quota. Elsewhere the backend falls back to
rlimits, which cannot cap CPU share.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
CPU_PERIOD = 100_000


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


class Cgroup:
    """One command's cgroup; ``join`` runs in the child before exec, ``remove`` after."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = folders

    @classmethod
    def create(cls, memory: int, cpus: float, pids: int) -> Cgroup | None:
        """A limited cgroup, or None when this system does not let us make one."""
        name = f"co-sandbox-{os.getpid()}-{secrets.token_hex(3)}"
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

    def join(self) -> None:
        """Move the calling process in (called in the child, before it drops privileges)."""
        pid = str(os.getpid())
        for folder in self.folders:
            _write(folder / "cgroup.procs", pid)

    def remove(self) -> None:
        """Delete the cgroup once its processes are gone (they die with the sandbox)."""
        for folder in self.folders:
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def describe() -> str:
    """How bubblewrap commands are limited on this machine (for ``co status``)."""
    probe = Cgroup.create(64 * 1024 * 1024, 1.0, 16)
    if probe is None:
        return "rlimits (no writable cgroup here, so CPU share is not limited)"
    probe.remove()
    return "cgroup limits on processes, memory and CPU"
