"""Bubblewrap's standby: the next command's bwrap started ahead, in its cgroup, waiting.

Checked where it lands: the cgroup's member list and ``/proc`` as the host sees them, the
limits as the command meets them, the arguments byte for byte, the clock of the timeout,
and the process table once Co is gone.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from co_shell.sandbox.cgroups import reap
from shell_testlib import FORK_UNTIL_REFUSED, make_workspace, require_backend, sandbox_for

SHOW_ARGS = "import os, sys; print([os.fsencode(a).hex() for a in sys.argv[1:10]])"
DIGEST = "import hashlib, os, sys; print(hashlib.sha256(repr(sys.argv[1:]).encode()).hexdigest())"


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = make_workspace()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def box(workspace: Path) -> Iterator[Any]:
    require_backend("bubblewrap")
    made = sandbox_for("bubblewrap", workspace, memory="300m", pids=77)
    if made._group() is None:
        made.close()
        pytest.skip("no writable cgroup hierarchy here (no standby: nothing slow to do ahead)")
    yield made
    made.close()


def eventually(check: Callable[[], bool], limit: float = 10.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def members(box: Any) -> list[set[int]]:
    """The pids in each of the box's cgroup folders (one per controller on v1)."""
    return [
        {int(pid) for pid in (folder / "cgroup.procs").read_text().split()}
        for folder in box._group().folders
    ]


def standby(box: Any) -> int:
    """The one process waiting in the box's cgroup (in every controller's folder), once it
    is made (a command that comes while it is being made goes without it)."""
    assert eventually(lambda: all(len(found) == 1 for found in members(box))), members(box)
    thread = box._spare._thread
    assert thread is None or eventually(lambda: not thread.is_alive())
    [pid] = set.intersection(*members(box))
    return pid


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_standby_waits_in_the_cgroup_limited_and_becomes_the_next_commands_bwrap(
    box: Any,
) -> None:
    box.prepare()
    pid = standby(box)
    limits = Path(f"/proc/{pid}/limits").read_text()
    assert [line.split()[-3] for line in limits.splitlines() if "core file" in line] == ["0"]
    seen: list[str] = []

    def look() -> None:
        for _ in range(300):
            try:
                seen.append(os.readlink(f"/proc/{pid}/exe"))
            except OSError:
                pass
            if any(path.endswith("/bwrap") for path in seen):
                return
            time.sleep(0.01)

    watcher = threading.Thread(target=look)
    watcher.start()
    assert box.run(["bash", "-c", "sleep 1; echo done"]).output == "done\n"
    watcher.join()
    assert any(path.endswith("/bwrap") for path in seen), seen
    # the next one waits already, a new process
    assert standby(box) != pid


def test_commands_run_from_a_standby_are_held_to_the_cgroup(box: Any) -> None:
    box.prepare()
    standby(box)
    forks = box.run(["python3", "-c", FORK_UNTIL_REFUSED])
    assert 0 < int(forks.output) < 77
    standby(box)
    big = box.run(["python3", "-c", "b = bytearray(600 * 1024 * 1024); print('held')"])
    assert "held" not in big.output and big.exit_code != 0
    standby(box)
    # the command's own view: its cgroup is the root of its cgroup namespace
    for line in box.run(["cat", "/proc/self/cgroup"]).output.splitlines():
        controllers, path = line.split(":", 2)[1:]
        if {"pids", "memory", "cpu"} & set(controllers.split(",")):
            assert path == "/", line


def test_the_timeout_counts_from_the_command_not_from_the_standby(box: Any) -> None:
    box.prepare()
    standby(box)
    time.sleep(1.5)  # the standby waited; the next command still has all its time
    slow = box.run(["bash", "-c", "sleep 1; echo in-time"], timeout=2)
    assert slow.output == "in-time\n" and not slow.timed_out
    standby(box)
    stuck = box.run(["sleep", "30"], timeout=1)
    assert stuck.timed_out and stuck.seconds < 10


@pytest.mark.parametrize("size", [0, 12 * 100_000], ids=["small", "larger-than-its-pipe"])
def test_arguments_arrive_byte_for_byte(box: Any, size: int) -> None:
    args = [
        "",
        " ",
        "a b",
        "new\nline",
        "-c",
        "--",
        "x=y",
        "'\"$HOME`id`",
        os.fsdecode(b"\xff\xfe"),
    ]
    args += ["z" * 100_000] * (size // 100_000)
    box.prepare()
    standby(box)
    shown = box.run(["python3", "-c", SHOW_ARGS, *args]).output
    assert shown.strip() == str([os.fsencode(a).hex() for a in args[:9]])
    standby(box)
    digest = box.run(["python3", "-c", DIGEST, *args]).output.strip()
    assert digest == hashlib.sha256(repr(args).encode()).hexdigest()
    assert box.run(["echo", "after"]).output == "after\n"


def test_a_standby_killed_behind_cos_back_costs_the_command_nothing(box: Any) -> None:
    box.prepare()
    os.kill(standby(box), signal.SIGKILL)
    assert box.run(["echo", "ran"]).output == "ran\n"
    assert box.run(["echo", "again"]).output == "again\n"


def test_closing_the_sandbox_ends_its_standby(box: Any) -> None:
    box.prepare()
    pid = standby(box)
    box.close()
    assert not alive(pid)


@contextlib.contextmanager
def a_co(workspace: Path, body: str) -> Iterator[tuple[str, Callable[[], None]]]:
    """A Co (a Python process with a bubblewrap sandbox ``box`` on ``workspace``) that runs
    ``body``, which prints one line; yields that line and what kills the Co outright."""
    require_backend("bubblewrap")
    script = f"""
import sys, time
sys.path.insert(0, {str(Path(__file__).parent)!r})
from pathlib import Path
from shell_testlib import sandbox_for
box = sandbox_for("bubblewrap", Path({str(workspace)!r}))
{textwrap.dedent(body)}
time.sleep(60)
"""
    co = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert co.stdout is not None
        line = co.stdout.readline().strip()
        if line == "none":
            pytest.skip("no writable cgroup hierarchy here (no standby)")

        def kill() -> None:
            co.send_signal(signal.SIGKILL)
            co.wait()

        yield line, kill
    finally:
        co.kill()
        co.wait()
        reap()  # the cgroup a killed Co leaves (or a failed run), as the next Co would


def test_a_killed_co_leaves_no_standby_and_runs_nothing(workspace: Path) -> None:
    """Co killed outright while a standby waits: its pipe closes, it exits, nothing runs."""
    body = """
        if box._group() is None:
            print("none", flush=True)
        else:
            box.run(["true"])
            for _ in range(500):
                found = (box._group().folders[0] / "cgroup.procs").read_text().split()
                if found:
                    break
                time.sleep(0.01)
            print(found[0], flush=True)
        """
    with a_co(workspace, body) as (line, kill):
        pid = int(line)
        assert alive(pid)
        kill()
        assert eventually(lambda: not alive(pid)), "the standby outlived Co"


def test_a_co_killed_before_its_first_command_leaves_no_cgroup(workspace: Path) -> None:
    """The cgroup and standby are made ahead of the first command (``prepare``); a Co killed
    then (while it snapshots the workspace for undo, say) has its keeper remove them."""
    body = """
        box.prepare()
        group = box._group()
        print(" ".join(map(str, group.folders)) if group else "none", flush=True)
        """
    with a_co(workspace, body) as (line, kill):
        folders = [Path(folder) for folder in line.split()]
        assert all(folder.is_dir() for folder in folders)
        kill()
        assert eventually(lambda: not any(f.exists() for f in folders)), "the cgroup outlived Co"


def test_a_command_that_comes_while_its_standby_is_made_goes_without_it(box: Any) -> None:
    """``prepare`` comes right before each command: the first goes the usual way (still
    held to the cgroup), the standby it started is the next one's."""
    box.prepare()
    forks = box.run(["python3", "-c", FORK_UNTIL_REFUSED])
    assert 0 < int(forks.output) < 77
    pid = standby(box)
    box.prepare()  # one is there: nothing more is started
    assert standby(box) == pid
    assert box.run(["echo", "next"]).output == "next\n"
