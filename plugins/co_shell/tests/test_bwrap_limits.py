"""Bubblewrap's limits, put on from outside while bwrap holds its sandbox at the door.

What is checked is where the limits land: the kernel's view of the command's own
process (its cgroup, its rlimits as ``ulimit`` reads them), the cgroup's member list as
the host sees it, and a command that must not run when its cgroup cannot be joined.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from co_shell.sandbox.base import SandboxError
from shell_testlib import FORK_UNTIL_REFUSED, make_workspace, require_backend, sandbox_for


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = make_workspace()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def box(workspace: Path) -> Iterator[Any]:
    require_backend("bubblewrap")
    made = sandbox_for("bubblewrap", workspace, memory="300m", pids=77)
    yield made
    made.close()


def _cgroup_or_skip(box: Any) -> Any:
    group = box._group()
    if group is None:
        pytest.skip("no writable cgroup hierarchy here (bubblewrap uses rlimits only)")
    return group


def test_the_first_thing_the_command_runs_is_already_in_its_cgroup(box: Any) -> None:
    """``cat`` is the command itself (no shell before it): it reads its own cgroup. Without
    a standby (whose sandbox is made inside the cgroup, so sees it as its namespace's root:
    test_bwrap_standby checks that one from outside)."""
    group = _cgroup_or_skip(box)
    box.ahead = False
    lines = box.run(["cat", "/proc/self/cgroup"]).output.splitlines()
    where = {}  # controller (v1) or "" (v2) -> the cgroup path the kernel gives
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") or [""]:
            where[controller] = path
    for folder in group.folders:
        controller = folder.parent.name if folder.parent.name != "cgroup" else ""
        assert where[controller].endswith("/" + folder.name), (controller, lines)


def test_the_host_lists_a_running_command_in_the_cgroup(box: Any) -> None:
    group = _cgroup_or_skip(box)
    members: list[str] = []

    def look() -> None:
        for _ in range(200):
            members[:] = (group.folders[0] / "cgroup.procs").read_text().split()
            if members:
                return
            time.sleep(0.01)

    watcher = threading.Thread(target=look)
    watcher.start()
    assert box.run(["bash", "-c", "sleep 1; echo done"]).output == "done\n"
    watcher.join()
    assert members  # the command's processes, seen from outside while it ran


def test_the_cgroup_caps_processes_and_memory(box: Any) -> None:
    _cgroup_or_skip(box)
    forks = box.run(["python3", "-c", FORK_UNTIL_REFUSED])
    assert 0 < int(forks.output) < 77
    big = box.run(["python3", "-c", "b = bytearray(600 * 1024 * 1024); print('held')"])
    assert "held" not in big.output and big.exit_code != 0


def test_without_a_cgroup_the_rlimits_are_the_commands_own(workspace: Path) -> None:
    """Where no cgroup can be made, the memory and process limits are rlimits, set on
    the held sandbox from outside (or, where Co may not, by the child before bwrap)."""
    require_backend("bubblewrap")
    box = sandbox_for("bubblewrap", workspace, memory="300m", pids=77)
    box._cgroup_tried = True  # as on a machine without a writable cgroup hierarchy
    try:
        out = box.run(["bash", "-c", "ulimit -v; ulimit -u; ulimit -c"]).output.split()
        memory, nproc, core = out
        assert int(memory) == 300 * 1024  # KiB
        # the user's processes so far (none, when no other sandbox runs as them), plus 77
        assert int(nproc) >= 77
        assert core == "0"
        assert box.run(["echo", "again"]).output == "again\n"  # the same way next time
    finally:
        box.close()


def test_a_command_whose_cgroup_is_gone_does_not_run(box: Any, workspace: Path) -> None:
    """Removed behind Co's back: the command is refused, never run unconfined, and the
    next command gets a new cgroup."""
    group = _cgroup_or_skip(box)
    assert box.run(["true"]).exit_code == 0
    group.remove()
    with pytest.raises(SandboxError, match="not run.*cgroup"):
        box.run(["touch", "/workspace/RAN"])
    assert not (workspace / "RAN").exists()
    assert box.run(["echo", "back"]).output == "back\n"
    assert box._group() is not None and box._group() is not group


def test_a_command_never_sees_the_pipes_that_held_it(box: Any) -> None:
    """bwrap's --info-fd and --block-fd are its own: the command inherits neither."""
    fds = box.run(["bash", "-c", "ls /proc/self/fd"]).output.split()
    assert sorted(fds, key=int) == ["0", "1", "2", "3"]  # 3: ls's own directory


def test_many_commands_in_a_row_leave_no_descriptor_open(box: Any) -> None:
    def settled() -> int:
        """Co's open descriptors, the next command's standby (if any) made."""
        thread = box._spare._thread
        if thread is not None:
            thread.join()
        return len(os.listdir("/proc/self/fd"))

    box.run(["true"])
    standby = 3 if box._group() is not None else 0  # a standby only where there is a cgroup
    before = settled()  # with the standby's three (its output, its argv, bwrap's info)
    for _ in range(30):
        box.run(["true"])
    assert settled() == before
    box.close()
    assert settled() == before - standby
