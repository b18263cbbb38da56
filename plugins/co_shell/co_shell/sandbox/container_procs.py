"""What still runs in a sandbox container, read from this machine's kernel when it can be.

After every command the Docker backend must know whether anything the command started is
still alive. The engine can say (``docker top``), but it answers by running ``ps`` on its
host: about as long again as the command itself. When the engine runs on this machine
and in Co's PID namespace, the kernel already lists the container's processes in its
cgroup's ``cgroup.procs``; reading that and each process's ``status`` takes a fraction of
a millisecond and is the same list ``docker top`` would give (the tests compare the two).

:meth:`CgroupView.find` only returns a view it has checked: the cgroup's path names the
container, and its ``cgroup.procs`` lists the container's init under the very pid the
engine gave (so the pid numbers are this namespace's). Anything else (a remote engine,
Co in a container of its own, a cgroup with sub-cgroups) gives None, and the backend asks
the engine as before.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
ENDED = {"Z", "X"}  # a zombie or a dead process runs nothing


def _status(pid: str) -> tuple[str, str] | None:
    """(real uid, state letter) of a process on this machine; None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    uid = state = ""
    for line in text.splitlines():
        if line.startswith("Uid:"):
            uid = line.split()[1]
        elif line.startswith("State:"):
            state = line.split()[1]
    return uid, state


def _folders(controllers: str, path: str) -> list[Path]:
    """Where a line of /proc/PID/cgroup puts the cgroup: cgroup v1's ``pids`` hierarchy,
    or v2 (mounted alone, or beside v1 as ``unified``)."""
    relative = path.lstrip("/")
    if not controllers:
        return [ROOT / relative, ROOT / "unified" / relative]
    if "pids" in controllers.split(","):
        return [ROOT / controllers / relative]
    return []


def _nested(folder: Path) -> bool:
    """Processes in a sub-cgroup are not in this one's list: such a view is refused."""
    try:
        return any(entry.is_dir() for entry in folder.iterdir())
    except OSError:
        return True


class CgroupView:
    """A container's processes as its cgroup lists them; the owner of its init is Co's."""

    def __init__(self, folder: Path, init_pid: str, owner: str) -> None:
        self.folder = folder
        self.init_pid = init_pid
        self.owner = owner

    @classmethod
    def find(cls, container_id: str, init_pid: str) -> CgroupView | None:
        """The view of the container whose init the engine names ``init_pid``, or None
        when this machine's kernel cannot be asked about it."""
        if not container_id or not init_pid.isdigit() or init_pid == "0":
            return None
        try:
            lines = Path(f"/proc/{init_pid}/cgroup").read_text().splitlines()
        except OSError:
            return None
        init = _status(init_pid)
        if init is None:
            return None
        for line in lines:
            _, controllers, path = line.split(":", 2)
            if container_id not in path:
                continue
            for folder in _folders(controllers, path):
                view = cls(folder, init_pid, init[0])
                if view._pids() is not None:
                    return view
        return None

    def _pids(self) -> list[str] | None:
        """The cgroup's process ids, or None when it is gone, no longer the container's, or
        has sub-cgroups (whose processes its list leaves out)."""
        try:
            pids = (self.folder / "cgroup.procs").read_text().split()
        except OSError:
            return None
        return pids if self.init_pid in pids and not _nested(self.folder) else None

    def others(self) -> list[str] | None:
        """Live processes in the container not owned by its init's user (what commands
        started), or None when the view was lost (the container ended or was replaced)."""
        pids = self._pids()
        if pids is None:
            return None
        left = []
        for pid in pids:
            found = _status(pid)
            if found is not None and found[0] != self.owner and found[1] not in ENDED:
                left.append(pid)
        return left
