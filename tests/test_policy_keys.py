"""One form of a command: its permission key is the command exactly as it will run.

Tested by difference on generated commands full of white space and control characters
(newlines, tabs, carriage returns, escape sequences, bidi and zero-width characters,
backslashes that look like escapes): two commands that run differently never share a key,
every key is one visible line and reads back to the very command that runs, a grant or
an "always" covers exactly the command it was given for, and the ``--approve`` that a
denial suggests, pasted into a shell, allows that command and no other.
"""

from __future__ import annotations

import asyncio
import random
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from policy_support import call, engine_for

from co_core.kernel.visible import key_text, key_value, unseen
from co_core.policy.engine import approve_flag
from co_core.policy.globs import literal
from co_core.testing import Approvals, audit_entries, make_app, run_turn, script_calls

PREFIX = "shell:exec:"
WORDS = ["echo", "ls", "touch", "X", "$HOME", "'a b'", '"$x"', "-la", "$(id)", "`id`", "#c"]
GAPS = [" ", "  ", "\t", "\n", "\r\n", "\r", " \\\n", ";", " && ", "|"]
ODD = ["\x1b[2J", "\x07", "\x7f", "\u202e", "\u200b", "\u2028", "\x85", "\\n", "\\t", "\\\\"]


def _command(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 6)):
        word = rng.choice(WORDS)
        if rng.random() < 0.3:
            cut = rng.randint(0, len(word))
            word = word[:cut] + rng.choice(ODD) + word[cut:]
        parts += [word, rng.choice(GAPS)]
    return "".join(parts[:-1])


def _commands(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [_command(rng) for _ in range(count)]


def _sibling(command: str, rng: random.Random) -> str:
    """The same words with one gap or character changed: a newline for a space, a tab..."""
    swaps = [(" ", "\n"), ("\n", " "), ("\t", " "), (" ", "\t"), ("\\n", "\n"), ("\n", "\\n")]
    swaps += [("\r", ""), ("\u202e", ""), ("\x1b", "\\x1b"), ("\\\\", "\\")]
    rng.shuffle(swaps)
    for old, new in swaps:
        if old in command:
            at = rng.choice([i for i in range(len(command)) if command.startswith(old, i)])
            return command[:at] + new + command[at + len(old) :]
    return command + "\n"


def test_each_key_is_one_visible_line_that_reads_back_to_what_runs(
    co_dirs: Path, tmp_path: Path
) -> None:
    engine = engine_for(tmp_path)
    runs_by_key: dict[str, str] = {}
    for command in _commands(3000, seed=35):
        the_call = call(engine, "run_shell", cmd=command)
        runs = str(the_call.args["cmd"])  # what the tool runs
        key = the_call.permission_key
        assert not any(unseen(ch) for ch in key), repr(key)
        assert key_value(key[len(PREFIX) :]) == runs, (command, key)
        earlier = runs_by_key.setdefault(key, runs)
        assert earlier == runs, f"one key {key!r} for {earlier!r} and {runs!r}"
        # a part's key is written the same way (a deny on a part sees it as it runs)
        for part in engine.decide(the_call).parts:
            assert not any(unseen(ch) for ch in part.key), repr(part.key)


def test_the_key_text_reads_back_exactly_on_any_text() -> None:
    rng = random.Random(3)
    alphabet = "ab \\ntrxuU0\n\t\r\x1b\x00\u202e\u200b\x85\u2028'\"$"
    for _ in range(50_000):
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        assert key_value(key_text(value)) == value, repr(value)
    assert key_text("printf 'a\\nb'") != key_text("printf 'a\nb'")
    assert key_text("grep 'a\\.b'") == "grep 'a\\.b'"  # a backslash that escapes nothing


@pytest.mark.parametrize("seed", [1, 2])
def test_an_approve_suggestion_allows_its_command_and_no_sibling(
    co_dirs: Path, tmp_path: Path, seed: int
) -> None:
    headless = engine_for(tmp_path, headless=True)
    rng = random.Random(seed)
    for command in _commands(120, seed=seed):
        denied = headless.decide(call(headless, "run_shell", cmd=command))
        if denied.effect != "deny":
            continue  # nothing to approve (a built-in rule allows it)
        flags = [approve_flag(k) for k in denied.pending]
        assert all(f in denied.reason for f in flags), denied.reason
        words = shlex.split(" ".join(flags))  # as the user's shell passes them
        patterns = words[1::2]
        assert [literal(p) for p in patterns] == list(denied.pending)
        approved = engine_for(tmp_path, headless=True, approve=patterns)
        the_call = call(approved, "run_shell", cmd=command)
        assert approved.decide(the_call).effect == "allow", (command, patterns)
        other = _sibling(command, rng)
        other_call = call(approved, "run_shell", cmd=other)
        if other_call.args["cmd"] != the_call.args["cmd"]:
            decided = approved.decide(other_call)
            assert decided.effect != "allow", (command, other, patterns)


def test_a_grant_covers_exactly_the_command_it_was_given_for(co_dirs: Path, tmp_path: Path) -> None:
    engine = engine_for(tmp_path)
    rng = random.Random(36)
    commands = [c for c in _commands(200, seed=36) if "$" in c or "`" in c][:60]
    assert len(commands) > 30
    for command in commands:
        decided = engine.decide(call(engine, "run_shell", cmd=command))
        if decided.needs_approval:
            engine.record_answer(decided, True, scope="project")
    later = engine_for(tmp_path)  # grants read back from disk
    for command in commands:
        assert later.decide(call(later, "run_shell", cmd=command)).effect == "allow", command
        other = _sibling(command, rng)
        runs = call(later, "run_shell", cmd=other).args["cmd"]
        if all(call(later, "run_shell", cmd=c).args["cmd"] != runs for c in commands):
            assert later.decide(call(later, "run_shell", cmd=other)).effect != "allow", other


@pytest.fixture
def workspace() -> Iterator[Path]:
    from shell_testlib import chown_tree, make_workspace

    folder = make_workspace()
    chown_tree(folder)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("sandbox", ["bubblewrap", "docker"])
def test_always_for_a_one_line_command_does_not_run_it_on_two_lines(
    co_dirs: Path, workspace: Path, sandbox: str
) -> None:
    """The attack: an "always" for `echo $HOME touch X` later ran `echo $HOME`⏎`touch X`."""
    from shell_testlib import sandbox_settings

    app = make_app({"shell": sandbox_settings(sandbox)}, cwd=workspace)
    one_line = script_calls(("run_shell_command", {"cmd": "echo $HOME touch X"}), answer="ok")
    always = Approvals({"run_shell_command": True}, scope="project")
    first = run_turn(app, "go", one_line, approvals=always)
    assert [c["status"] for c in first.calls] == ["ok"]
    assert not (workspace / "X").exists()  # echo printed the words
    two_lines = script_calls(("run_shell_command", {"cmd": "echo $HOME\ntouch X"}), answer="ok")
    second = run_turn(app, "go", two_lines, headless=True)
    assert [c["status"] for c in second.calls] == ["denied"]
    assert not (workspace / "X").exists()
    decided = [e for e in audit_entries(second.session_id) if e.get("event") == "decision"]
    assert decided[-1]["permission"] == "shell:exec:echo $HOME\\ntouch X"
    # the --approve the denial suggests, as a shell reads it, runs that very command
    reason = str(decided[-1]["reason"])
    pattern = shlex.split(reason[reason.index("--approve") :])[1]
    assert key_value(literal(pattern) or "") == "shell:exec:echo $HOME\ntouch X"
    third = _ask(app, two_lines, approve=(pattern,))
    assert [c["status"] for c in third] == ["ok"]
    assert (workspace / "X").exists()


def _ask(app: Any, script: Any, approve: tuple[str, ...]) -> list[dict[str, Any]]:
    """One turn as ``co ask --approve ...`` runs it (headless, with the flags)."""
    from co_core.agent.conversation import Conversation
    from co_core.agent.frontend import NoTerminal
    from co_core.agent.models import ResolvedModel
    from co_core.testing import scripted_model

    conversation = Conversation(app, frontend=NoTerminal(), headless=True, approve=approve)
    conversation.model = ResolvedModel(scripted_model(script), "scripted")
    conversation.prepare()
    try:
        result = asyncio.run(conversation.run_turn("go"))
    finally:
        conversation.close()
    return [record.as_dict() for record in result.calls]


def test_the_prompt_and_the_audit_show_the_key_as_it_is(co_dirs: Path, tmp_path: Path) -> None:
    """A newline in a command is shown as ``\\n`` in the approval block's key line."""
    from co_core.agent.calls import ToolCallRecord
    from co_core.ui.approval import describe

    engine = engine_for(tmp_path)
    the_call = call(engine, "run_shell", cmd="echo $HOME\ntouch X\x1b[2J")
    record = ToolCallRecord("c1", the_call, dict(the_call.args))
    record.decision = engine.decide(the_call)
    lines = describe(record)
    assert "  permission: shell:exec:echo $HOME\\ntouch X\\x1b[2J" in lines
    assert all("\x1b" not in line for line in lines)
