"""Ctrl+C always cancels, and a sandboxed command ends with its turn (issue 36.1, 36.2).

A real ``co chat`` in a pty with a scripted model, the real co-shell and both real
sandboxes (bubblewrap, and Docker with the local test image). What counts is what a
user would see and what is left on the machine: the turn ends at the first Ctrl+C (at
an approval prompt, or while an approved command runs), the model is not asked again,
the command's process is gone (found in the process table by its own argument, the
container's too), and a closed terminal or a killed Co leaves nothing in the project
(its listing and ``git status``).

The commands would run for ten minutes (``shell.timeout`` is longer still), so a turn
that ends at all was ended by the Ctrl+C; no test measures time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest
from processes import eventually, sleeping
from pty_chat import CO

PROMPT = "co>"
SECONDS = 600  # how long each command would run; each test uses its own number (below)


def git_status(folder: Path) -> str:
    done = subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", str(folder), "status", "--porcelain"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if ".git/" not in str(p))


@pytest.fixture(params=["bubblewrap", "docker"])
def shell_chat(
    request: pytest.FixtureRequest, testplug: Path, tmp_path: Path
) -> Iterator[Callable[..., pexpect.spawn]]:
    """``co chat`` with co-shell in the sandbox named by the parameter, in a fresh workspace."""
    from shell_testlib import chown_tree, make_workspace, require_backend

    backend = request.param
    image = require_backend(backend)
    shell: dict[str, object] = {"sandbox": backend, "timeout": SECONDS * 2, "keep_container": False}
    if image:
        shell["image"] = image
    config = Path(os.environ["CO_CONFIG_DIR"])
    (config / "settings.json").write_text(json.dumps({"shell": shell}))
    workspace = make_workspace()
    children: list[pexpect.spawn] = []

    def spawn(*args: str, git: bool = False) -> pexpect.spawn:
        if git:
            subprocess.run(["git", "init", "-q", str(workspace)], check=True)
            (workspace / "notes.txt").write_text("kept\n")
            chown_tree(workspace)
        child = pexpect.spawn(
            CO,
            ["chat", "-m", "function:co_scripts:chat", *args],
            env={**os.environ, "CO_LOAD_PLUGINS": "testplug,shell"},
            cwd=str(workspace),
            encoding="utf-8",
            timeout=120,
            dimensions=(40, 160),
        )
        child.workspace = workspace  # type: ignore[attr-defined]
        children.append(child)
        child.expect(PROMPT)
        return child

    yield spawn
    for child in children:
        try:
            if child.isalive():
                child.terminate(force=True)
        except pexpect.ExceptionPexpect:  # waited for by the test itself
            pass
    if backend == "docker":
        from co_shell.sandbox.docker_sandbox import connect, container_name

        client = connect()
        try:
            client.containers.get(container_name(workspace)).remove(force=True)
        except Exception:
            pass
        client.close()
    subprocess.run(["rm", "-rf", str(workspace)], check=False)


def _started(child: pexpect.spawn, marker: str) -> None:
    assert eventually(lambda: sleeping(marker) != []), "the command never started"
    time.sleep(0.3)  # Ctrl+C well inside the command, not as it starts


def test_ctrl_c_at_the_approval_prompt_ends_the_turn(shell_chat) -> None:
    child = shell_chat()
    marker = "601"
    child.sendline(f"run sleep {marker}")
    child.expect(r"Allow\?")
    child.sendintr()
    child.expect("Cancelled")
    child.expect(PROMPT)
    assert "denied" not in child.before  # not a "no" the model is told about and goes on
    assert "Here it is" not in child.before and "⚙" not in child.before
    assert sleeping(marker) == []
    # the chat goes on, and Ctrl+C still cancels the next prompt's turn
    child.sendline("hello")
    child.expect("You said")
    child.expect(PROMPT)
    child.sendline(f"run sleep {marker}")
    child.expect(r"Allow\?")
    child.sendintr()
    child.expect("Cancelled")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_ctrl_c_during_an_approved_command_kills_it(shell_chat) -> None:
    child = shell_chat()
    marker = "602"
    child.sendline(f"run sleep {marker}")
    child.expect(r"Allow\?")
    child.sendline("y")
    _started(child, marker)
    child.sendintr()
    child.expect("Cancelled")
    child.expect(PROMPT)
    assert "Here it is" not in child.before  # the model was not asked again
    assert eventually(lambda: sleeping(marker) == []), "the command outlived its turn"
    # twice in one session: the second approval and command cancel the same way
    child.sendline(f"run sleep {marker}")
    child.expect(r"Allow\?")
    child.sendline("y")
    _started(child, marker)
    child.sendintr()
    child.expect("Cancelled")
    child.expect(PROMPT)
    assert eventually(lambda: sleeping(marker) == [])
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


@pytest.mark.parametrize("git", [True, False], ids=["git repository", "plain folder"])
@pytest.mark.parametrize("how", ["closed terminal", "SIGKILL"])
def test_co_ended_mid_command_leaves_nothing_in_the_project(
    shell_chat, git: bool, how: str
) -> None:
    """A closed terminal (SIGHUP), or Co killed outright: no placeholder, no process, no
    container is left; the project's listing and ``git status`` are as before."""
    child = shell_chat("--yolo", git=git)
    workspace: Path = child.workspace
    before = listing(workspace)
    status = git_status(workspace) if git else ""
    marker = "603" if git else "604"
    child.sendline(f"run sleep {marker}")
    _started(child, marker)
    if how == "closed terminal":
        os.close(child.child_fd)  # the kernel hangs up the session, as a closed window does
        child.closed = True
        _, code = os.waitpid(child.pid, 0)
        assert os.waitstatus_to_exitcode(code) == 128 + signal.SIGHUP
    else:
        os.kill(child.pid, signal.SIGKILL)
        os.waitpid(child.pid, 0)
        child.closed = True
    assert eventually(lambda: sleeping(marker) == []), "the command outlived Co"
    assert eventually(lambda: listing(workspace) == before), listing(workspace)
    if git:
        assert git_status(workspace) == status


def test_an_approved_command_s_seconds_count_from_the_answer(shell_chat) -> None:
    """The spinner's seconds say how long the command has run, not how long the approval
    prompt waited for the user (it said "· 45 s" four seconds into a command)."""
    child = shell_chat()
    marker = "607"
    waited = 8
    child.sendline(f"run sleep {marker}")
    child.expect(r"Allow\?")
    time.sleep(waited)  # the user reads the question
    child.sendline("y")
    _started(child, marker)
    child.expect(r"running run_shell_command\(cmd=sleep 607\) · (\d+) s · Ctrl\+C cancels")
    assert int(child.match.group(1)) < waited, child.match.group(0)
    child.sendintr()
    child.expect("Cancelled")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
