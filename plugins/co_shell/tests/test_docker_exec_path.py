"""The Docker backend's path for one command: one exec, /tmp emptied inside it, and what
is left running read from the kernel, checked against the engine's own answers.

The execs are counted where they land: the engine's event stream (``exec_create``), not
Co's model of what it sent.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from co_shell.sandbox.base import SHELL, SandboxError
from co_shell.sandbox.container_procs import CgroupView
from shell_testlib import make_workspace, require_backend, sandbox_for


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = make_workspace()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def box(workspace: Path) -> Iterator[Any]:
    sandbox = sandbox_for("docker", workspace, require_backend("docker"))
    sandbox.run(["true"])  # made, checked and warm: what follows is one command each
    yield sandbox
    sandbox.close()


def _execs(box: Any, since: float, until: float) -> list[str]:
    """Every exec the engine created in the container between the two times."""
    found = box.client.events(
        since=int(since),
        until=int(until) + 1,
        filters={"container": box.container().id, "type": "container"},
        decode=True,
    )
    return [
        event["Action"]
        for event in found
        if event["Action"].startswith("exec_create") and since * 1e9 <= event["timeNano"]
    ]


def _exec(box: Any, argv: list[str], user: str, detach: bool = False) -> Any:
    """An exec of the test's own, past Co (as the user might do with ``docker exec``)."""
    api = box.client.api
    made = api.exec_create(box.container().id, argv, user=user)
    return api.exec_start(made["Id"], detach=detach)


# What commands leave in /tmp, each family once: plain and hidden files, a folder nobody
# may read or enter, names that look like options, a FIFO, a deep tree, a symlink out.
LEAVE_BEHIND = {
    "files": "echo x > /tmp/a; echo y > /tmp/.hidden; mkdir -p /tmp/.config/git",
    "unreadable": "mkdir -p /tmp/locked/in && echo s > /tmp/locked/in/f && chmod 000 /tmp/locked",
    "option-like": "touch /tmp/-rf /tmp/--help '/tmp/ spaced' /tmp/$'new\\nline'",
    "fifo": "mkfifo /tmp/pipe",
    "deep": "d=/tmp; for i in $(seq 60); do d=$d/x; done; mkdir -p $d && touch $d/f",
    "symlink": "echo keep > /workspace/kept && ln -s /workspace/kept /tmp/link",
}


def test_each_command_is_one_exec_and_starts_with_an_empty_tmp(box: Any, workspace: Path) -> None:
    commands = [[*SHELL, text] for text in LEAVE_BEHIND.values()]
    looks = []
    started = time.time()
    for command in commands:
        assert box.run(command).exit_code == 0, command
        looks.append(box.run(["ls", "-A", "/tmp"]).output)
    ended = time.time()
    execs = _execs(box, started, ended)
    assert len(execs) == 2 * len(commands), execs  # the command and the look, nothing else
    assert looks == [""] * len(commands), dict(zip(LEAVE_BEHIND, looks, strict=True))
    assert (workspace / "kept").read_text() == "keep\n"  # emptying /tmp went no further


def test_a_background_writer_cannot_refill_tmp_for_the_next_command(box: Any) -> None:
    """It is ended before ``run`` returns, so nothing writes into /tmp behind the prelude."""
    box.run([*SHELL, "(while :; do touch /tmp/late-$RANDOM; sleep 0.01; done) & sleep 0.2"])
    time.sleep(0.3)
    assert box.run(["ls", "-A", "/tmp"]).output == ""


def test_tmp_that_cannot_be_emptied_means_the_command_does_not_run(
    box: Any, workspace: Path
) -> None:
    """A file Co's uid may not remove (root's, in the sticky /tmp, as a ``docker exec`` by
    hand would leave): the command is not run, the error says so, and the next command
    gets a new container."""
    old = box.container().id
    _exec(box, ["sh", "-c", "touch /tmp/root-owned"], user="0:0")
    with pytest.raises(SandboxError, match="could not empty /tmp.*did not run"):
        box.run([*SHELL, "touch /workspace/RAN"])
    assert not (workspace / "RAN").exists()
    assert box.run(["ls", "-A", "/tmp"]).output == ""
    assert box.container().id != old


def test_a_missing_program_is_one_line_with_its_name(box: Any) -> None:
    result = box.run(["co-no-such-program", "x"])
    assert result.exit_code == 127
    assert "co-no-such-program" in result.output and "not found" in result.output


# -- what is left running: the kernel's list against the engine's ----------------------------


def _engine_list(box: Any) -> set[str]:
    """``docker top``'s processes not owned by the container's init's user, zombies out."""
    found = box.client.api.top(box.container().id)
    titles = found["Titles"]
    pid, uid, cmd = (titles.index(name) for name in ("PID", "UID", "CMD"))
    rows = found["Processes"] or []
    init = str(box.container().attrs["State"]["Pid"])
    owner = next(row[uid] for row in rows if row[pid] == init)
    return {r[pid] for r in rows if r[uid] != owner and not r[cmd].endswith("<defunct>")}


def test_the_kernels_list_of_leftovers_is_the_engines(box: Any) -> None:
    container = box.container()
    container.reload()
    view = CgroupView.find(container.id, str(container.attrs["State"]["Pid"]))
    assert view is not None  # the engine runs on this machine, in this PID namespace
    assert view.others() == [] and _engine_list(box) == set()
    user = f"{box.uid}:{box.gid}"
    for count in (1, 4):
        for _ in range(count):  # started past Co, as a command that got away would be
            _exec(box, ["sleep", "600"], user=user, detach=True)
        for _ in range(100):
            if len(view.others() or []) >= count:
                break
            time.sleep(0.05)
        assert set(view.others() or []) == _engine_list(box)
        assert len(_engine_list(box)) == count
        box.run(["true"])  # Co ends them, with the command
        assert view.others() == [] and _engine_list(box) == set()


def test_a_view_is_only_of_the_container_it_names(box: Any) -> None:
    container = box.container()
    container.reload()
    init = str(container.attrs["State"]["Pid"])
    assert CgroupView.find(container.id, str(os.getpid())) is None  # Co's own process
    assert CgroupView.find("0" * 64, init) is None  # another container's id
    assert CgroupView.find(container.id, "0") is None
    assert CgroupView.find("", init) is None
    view = CgroupView.find(container.id, init)
    assert view is not None
    container.remove(force=True)
    assert view.others() is None  # gone: the caller asks the engine instead
