"""``!cmd``, ``@path`` with Tab completion, and the user's own commands, typed into
``co chat`` in a real pty: co-shell's real tools, a real bubblewrap sandbox, a real git."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from processes import eventually, sleeping

PROMPT = "co>"


def chown_for_sandbox(path: Path) -> None:
    """As root, commands run as uid 1000: it must be able to use the workspace."""
    if os.getuid() == 0:
        for item in [path, *path.rglob("*")]:
            os.lchown(item, 1000, 1000)


@pytest.fixture
def workspace(chat: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("CO_LOAD_PLUGINS", "testplug,shell")
    monkeypatch.setenv("CO_SHELL_SANDBOX", "bubblewrap")
    folder = Path(tempfile.mkdtemp(prefix="co-extras-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_bang_runs_in_the_sandbox_and_shows_its_output(chat: Any, workspace: Path) -> None:
    chown_for_sandbox(workspace)
    child = chat(cwd=workspace)
    child.sendline("!echo made by me > made.txt && cat made.txt && id -u")
    child.expect(r"\$ echo made by me > made.txt && cat made.txt && id -u")
    child.expect("made by me")
    child.expect(PROMPT)
    assert "Allow?" not in child.before  # the user typed it: not asked
    assert (workspace / "made.txt").read_text() == "made by me\n"
    child.sendline("!")
    child.expect("nothing to run")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_at_path_tab_completion_leaves_out_what_git_ignores(chat: Any, workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / "notes.log").write_text("ignored\n")
    (workspace / "notes.txt").write_text("Meeting in room B-204.\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("print('hi')\n")
    child = chat(cwd=workspace)
    child.send("summarise @not")
    child.send("\t")  # the one completion git does not ignore: notes.txt
    child.expect("es\\.txt")  # what Tab added is drawn after what was typed
    child.send(" and @sr")
    child.send("\t")
    child.expect("c/")
    # Keys and Tab in one write, as a loaded machine reads them: the Tab is not lost
    # behind the completion the typing started.
    child.send("ma\t")
    child.expect("in\\.py")
    child.send("\r")
    child.expect("⚙ read_file\\(path=notes.txt\\)")
    child.expect("⚙ read_file\\(path=src/main.py\\)")
    child.expect(r"\(turn 1\)")  # the model's answer quotes the whole message
    child.expect(PROMPT)
    shown = child.before
    assert "room B-204" in shown and "print('hi')" in shown and "ignored" not in shown
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_a_denied_mention_is_refused_and_nothing_is_sent(
    chat: Any, workspace: Path, testplug: Path
) -> None:
    import json

    rules = [{"match": "fs:read:.env", "effect": "deny", "reason": "secrets stay out"}]
    (testplug / "settings.json").write_text(json.dumps({"policy": {"rules": rules}}))
    (workspace / ".env").write_text("TOKEN=abc\n")
    child = chat(cwd=workspace)
    child.sendline("what is in @.env")
    child.expect("secrets stay out")
    child.expect("the message was not sent")
    child.expect(PROMPT)
    assert "You said" not in child.before and "TOKEN=abc" not in child.before
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_own_commands_complete_show_in_help_and_run(
    chat: Any, workspace: Path, testplug: Path
) -> None:
    commands = testplug / "commands"
    commands.mkdir()
    (commands / "review.md").write_text(
        "---\ndescription: Review a file for bugs\nargument-hint: FILE\n---\nReview $1 carefully.\n"
    )
    project = workspace / ".co" / "commands"
    project.mkdir(parents=True)
    (project / "deploy.md").write_text("Deploy everything now.")
    child = chat(cwd=workspace)  # the notice comes before the first prompt
    assert f"ignoring 1 command file in {project}: folder not trusted" in child.before
    assert f"co trust {workspace}" in child.before
    child.sendline("/help")
    child.expect(r"/review\s+Review a file for bugs FILE \(user: review.md\)")
    child.expect(PROMPT)
    assert "/deploy" not in child.before
    child.send("/rev")
    child.send("\t")
    child.expect("/review")
    child.send(" notes.txt\r")
    child.expect(r"You said \*\*Review notes.txt carefully.\*\*|Review notes.txt carefully")
    child.expect(r"\(turn 1\)")
    child.expect(PROMPT)
    child.sendline("/deploy")
    child.expect("unknown command /deploy")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


# -- Ctrl+C while the user's hook or a typed command runs ---------------------------------


@pytest.fixture
def marker() -> Iterator[str]:
    """A ``sleep`` argument no other process uses; whatever still sleeps with it is
    ended when the test is (a failing test leaves nothing running)."""
    import signal

    value = str(7_000_000 + int.from_bytes(os.urandom(3), "big") % 1_000_000)
    yield value
    for pid in sleeping(value):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def test_ctrl_c_while_a_hook_runs_ends_it_and_the_chat_goes_on(
    chat: Any, workspace: Path, testplug: Path, marker: str
) -> None:
    """A prompt hook that would sleep ten minutes (once: a flag file says it ran): Ctrl+C
    cancels the turn, the hook's process is gone, and the next message gets its answer."""
    import json

    flag = workspace / "hook-ran"
    command = f"[ -e {flag} ] || {{ : > {flag}; exec sleep {marker}; }}"
    hooks = {"prompt": [{"command": command, "timeout": 600, "name": "slow-gate"}]}
    (testplug / "settings.json").write_text(json.dumps({"hooks": hooks}))
    child = chat(cwd=workspace)
    child.sendline("first question")
    assert eventually(lambda: bool(sleeping(marker)))  # the hook runs
    child.sendintr()
    child.expect("Cancelled")
    child.expect(PROMPT)
    assert eventually(lambda: not sleeping(marker))  # killed, not left to its timeout
    child.sendline("second question")
    child.expect(r"You said \*\*second question\*\*|second question")
    child.expect(r"\(turn \d\)")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    assert "Traceback" not in child.before


def test_ctrl_c_while_a_typed_command_runs_kills_it_and_the_chat_goes_on(
    chat: Any, workspace: Path, marker: str
) -> None:
    """``!sleep`` for ten minutes in the bubblewrap sandbox: Ctrl+C cancels it, its process
    is gone, and the next ``!`` command runs."""
    chown_for_sandbox(workspace)
    child = chat(cwd=workspace)
    child.sendline(f"!sleep {marker}")
    child.expect(f"\\$ sleep {marker}")
    assert eventually(lambda: bool(sleeping(marker)))
    child.sendintr()
    child.expect("Cancelled")
    child.expect(PROMPT)
    assert eventually(lambda: not sleeping(marker), limit=20)
    child.sendline("!echo still here")
    child.expect(r"\$ echo still here")  # the line Co draws, not the typed one
    child.expect("still here")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    assert "Traceback" not in child.before
