"""One command, one exec: the Docker backend's clean-up costs no round trip of its own.

Counted where it lands, in the engine's own event stream (``exec_create`` per exec), and
what Co reads from the kernel instead of asking ``docker top`` is compared with
``docker top`` itself. The guarantees the clean-up keeps (an empty ``/tmp`` for every
command, nothing left running) are tried as attacks in ``test_shell_backends`` and
``test_sandbox_reach_back``; here the attacks are the ones aimed at the new shape: a
command that kills the exec it runs in, or fights the emptying of ``/tmp``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from co_shell.sandbox.container_procs import CgroupView
from shell_testlib import make_workspace, require_backend, sandbox_for

SLEEPER = "sleep {token} >/dev/null 2>&1 &"


@pytest.fixture
def box() -> Iterator[Any]:
    workspace = make_workspace()
    made = sandbox_for("docker", workspace, require_backend("docker"))
    made.run(["true"])  # the container is made (and checked) before anything is counted
    yield made
    made.close()
    shutil.rmtree(workspace, ignore_errors=True)


def _execs(box: Any, command: str) -> tuple[Any, list[str]]:
    """Run ``command``; the result and every exec the engine made meanwhile, by argv."""
    cid = box.container().id
    since = time.time()
    result = box.run(["bash", "-c", command])
    until = time.time() + 0.5
    events = box.client.events(
        since=f"{since:.6f}",
        until=f"{until:.6f}",
        filters={"container": cid, "event": "exec_create"},
        decode=True,
    )
    return result, [event["Action"].removeprefix("exec_create: ") for event in events]


def _uid_rows(box: Any) -> list[str]:
    """``docker top``'s pids of processes not owned by the container's own root."""
    found = box.client.api.top(box.container().id, ps_args="-o pid,uid,stat")
    return sorted(
        row[0] for row in found["Processes"] or [] if row[1] != "0" and not row[2].startswith("Z")
    )


@pytest.mark.parametrize(
    "command",
    ["echo hi", "echo x > /tmp/left; mkdir -p /tmp/d/e && chmod 000 /tmp/d", "exit 3", ""],
)
def test_a_command_is_one_exec(box: Any, command: str) -> None:
    result, execs = _execs(box, command)
    assert len(execs) == 1, execs
    assert execs[0].endswith(command) if command else execs[0]
    assert result.exit_code == (3 if command == "exit 3" else 0)


def test_what_a_command_left_in_tmp_is_gone_for_the_next_one_still_in_one_exec(box: Any) -> None:
    box.run(["bash", "-c", "mkdir -p /tmp/.config/a && touch /tmp/.hidden && chmod 0 /tmp/.config"])
    result, execs = _execs(box, "ls -A /tmp")
    assert (result.output, len(execs)) == ("", 1)


def test_a_command_that_kills_its_own_exec_still_leaves_nothing(box: Any) -> None:
    """The exec is the command itself: killing it ends the call, not the clean-up, which
    is read from the kernel afterwards and done by the next exec's prelude."""
    token = f"9{secrets.randbelow(10**6):06d}"
    result = box.run(["bash", "-c", f"echo x > /tmp/f; {SLEEPER.format(token=token)} kill -9 $$"])
    assert result.exit_code == 137
    assert _uid_rows(box) == []
    assert box.run(["ls", "-A", "/tmp"]).output == ""


def test_what_a_command_leaves_running_costs_the_kill_and_nothing_more(box: Any) -> None:
    token = f"9{secrets.randbelow(10**6):06d}"
    result, execs = _execs(box, f"{SLEEPER.format(token=token)} echo started")
    assert "started" in result.output
    assert len(execs) == 2 and execs[1].endswith("kill -9 -1"), execs
    assert _uid_rows(box) == []


def test_the_kernel_lists_what_docker_top_lists(box: Any) -> None:
    """The processes Co reads from the container's cgroup are the ones the engine shows."""
    api = box.client.api
    cid = box.container().id
    view = CgroupView.find(cid, str(box.container().attrs["State"]["Pid"]))
    if view is None:
        pytest.skip("the engine does not run in this machine's PID namespace")
    assert view.others() == [] == _uid_rows(box)
    token = f"9{secrets.randbelow(10**6):06d}"
    start = api.exec_create(
        cid, ["bash", "-c", f"for i in 1 2 3; do {SLEEPER.format(token=token)} done"], user="1000"
    )
    api.exec_start(start["Id"])
    try:
        assert sorted(view.others() or []) == _uid_rows(box)
        assert len(_uid_rows(box)) == 3
    finally:
        box.run(["true"])  # the next command's clean-up ends them
    assert view.others() == [] == _uid_rows(box)


def test_a_view_is_only_given_for_the_container_it_names(box: Any) -> None:
    cid = box.container().id
    init = str(box.container().attrs["State"]["Pid"])
    if CgroupView.find(cid, init) is None:
        pytest.skip("the engine does not run in this machine's PID namespace")
    assert CgroupView.find(cid, str(os.getpid())) is None  # a pid that is not its init
    assert CgroupView.find("0" * 64, init) is None  # another container's id
    assert CgroupView.find(cid, "0") is None


def test_more_names_in_tmp_than_a_command_line_holds_are_emptied(box: Any) -> None:
    name = "f$i" + "x" * 200
    fill = f"cd /tmp && for i in {{1..20000}}; do : > {name}; done; ln -s /workspace/kept /tmp/l"
    (Path(box.workspace) / "kept").write_text("mine")
    os.chmod(Path(box.workspace) / "kept", 0o600)
    box.run(["bash", "-c", fill])
    assert box.run(["bash", "-c", "ls -A /tmp | wc -l"]).output.strip() == "0"
    assert (Path(box.workspace) / "kept").stat().st_mode & 0o777 == 0o600  # not followed


def test_a_tmp_that_cannot_be_emptied_runs_nothing_and_says_so(box: Any) -> None:
    """A file there that the sandbox user cannot remove (someone ran ``docker exec`` as
    root into the container): the command is not run, and the container is made anew."""
    api = box.client.api
    first = box.container().id
    planted = api.exec_create(first, ["bash", "-c", "echo x > /tmp/root-owned"], user="0:0")
    api.exec_start(planted["Id"])
    with pytest.raises(Exception, match="could not empty /tmp"):
        box.run(["bash", "-c", "touch /workspace/RAN"])
    assert not (Path(box.workspace) / "RAN").exists()
    assert box.run(["ls", "-A", "/tmp"]).output == ""
    assert box.container().id != first
