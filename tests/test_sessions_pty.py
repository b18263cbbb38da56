"""Sessions in a real pty: --continue, --resume, SIGKILL mid-turn, /sessions, /context, /compact."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pexpect

from co_core.testing import run_co

PROMPT = "co>"


def turn(child: pexpect.spawn, text: str, expect: str) -> None:
    child.sendline(text)
    child.expect(expect)
    child.expect(PROMPT)


def sessions(tmp_path: Path) -> list[dict]:
    result = run_co("sessions", "list", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_continue_after_sigkill_mid_turn_has_every_completed_turn(chat, tmp_path: Path) -> None:
    child = chat()
    turn(child, "hello there", r"\(turn 1\)")
    turn(child, "colour blue", "Tool said: - blue")
    child.sendline("slow 30")
    child.expect("⚙ slow")  # the model asked for a tool; the turn is running
    os.kill(child.pid, signal.SIGKILL)
    child.expect(pexpect.EOF)

    [saved] = sessions(tmp_path)
    assert saved["turns"] == 2 and saved["title"] == "hello there"

    child = chat("--continue")
    assert f"resumed {saved['id']}" in child.before
    # the scripted model counts the user turns it is shown: both earlier turns came back
    turn(child, "are you there", r"\(turn 3\)")
    child.sendline("exit")
    child.expect(pexpect.EOF)
    shown = run_co("sessions", "show", saved["id"][:6], cwd=tmp_path).stdout
    assert "hello there" in shown and "example.org/blue" in shown and "are you there" in shown


def test_resume_by_prefix_and_slash_commands(chat, tmp_path: Path) -> None:
    child = chat()
    turn(child, "first chat", r"\(turn 1\)")
    child.sendline("exit")
    child.expect(pexpect.EOF)
    [first] = sessions(tmp_path)

    child = chat()
    turn(child, "second chat", r"\(turn 1\)")
    child.sendline("/sessions")
    child.expect(first["id"])
    child.expect(PROMPT)
    turn(child, f"/resume {first['id'][:5]}", f"resumed {first['id']}: first chat")
    turn(child, "still me", r"\(turn 2\)")
    child.sendline("/context")
    child.expect(r"context: [\d,]+ / [\d,]+ tokens")
    child.expect("conversation")
    child.expect(PROMPT)
    turn(child, "/resume nothing-here", "not a session id")
    child.sendline("exit")
    child.expect(pexpect.EOF)
    by_id = {s["id"]: s for s in sessions(tmp_path)}
    assert by_id[first["id"]]["turns"] == 2


def test_context_counts_tools_as_the_budget_does(chat, tmp_path: Path) -> None:
    """A model with its own tool budget (as ``local`` has): /context's tools row and its
    budget line count the tools of the last request with one counter, the fitting's."""
    import re

    child = chat("-m", "function:co_scripts:budgeted")
    turn(child, "colour blue", "Tool said: - blue")
    child.sendline("/context")
    child.expect(r"tokens of budget")
    text = child.before  # what /context printed, up to its budget line
    child.expect(PROMPT)
    row = re.search(r"^\s*tools\s+([\d,]+)\s*$", text, re.MULTILINE)
    budget = re.search(r"tools: \d+ of \d+ sent(?: and find_tools)?, ([\d,]+) of 250 $", text)
    assert row and budget, text
    assert row.group(1) == budget.group(1)
    child.sendline("exit")
    child.expect(pexpect.EOF)


def test_compact_keeps_the_recent_turns_and_the_store_keeps_all(chat, tmp_path: Path) -> None:
    child = chat()
    for n in range(4):
        turn(child, f"message {n}", rf"\(turn {n + 1}\)")
    child.sendline("/compact")
    child.expect(r"Compacting: \S+ summarises 2 older turns \([\d,]+ tokens; the last 2 stay")
    child.expect(r"Compacted \d+ older messages \([\d,]+ tokens\) into a [\d,]+-token summary")
    child.expect(r"context \d+% → \d+% \([\d,]+ → [\d,]+ tokens, [\d,]+ freed\)")
    child.expect(PROMPT)
    # summary (1) + the 2 kept turns + this one: the model now sees 4 user turns
    turn(child, "after compaction", r"\(turn 4\)")
    child.sendline("exit")
    child.expect(pexpect.EOF)
    [saved] = sessions(tmp_path)
    assert saved["turns"] == 5
    shown = run_co("sessions", "show", saved["id"], cwd=tmp_path).stdout
    assert "message 0" in shown  # the original is kept

    child = chat("--continue")
    turn(child, "and now", r"\(turn 5\)")  # resumed compacted: summary + 3 turns + this


def test_auto_compaction_at_ninety_percent(chat, tmp_path: Path) -> None:
    (tmp_path / "co-config" / "settings.json").write_text(
        json.dumps({"sessions": {"context_window": 1024, "reserve_output": 0}})
    )
    child = chat()
    filler = "words " * 60
    seen = ""
    for n in range(12):
        child.sendline(f"turn {n} {filler}")
        child.expect(r"\(turn \d+\)")
        child.expect(PROMPT)
        seen += child.before
        if "compacted to" in seen:
            break
    assert "/compact summarises older turns" in seen  # suggested first, at 50 %
    assert "compacted to" in seen


def test_co_ask_is_saved_under_its_session_id(testplug: Path, tmp_path: Path) -> None:
    result = run_co(
        "ask", "--json", "-m", "function:co_scripts:chat", "remember the milk", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    sid = json.loads(result.stdout)["session_id"]
    [saved] = sessions(tmp_path)
    assert saved["id"] == sid and saved["title"] == "remember the milk"
    assert saved["source"] == "ask"


def test_continue_resumes_the_last_chat_not_the_last_co_ask(chat, tmp_path: Path) -> None:
    child = chat()
    turn(child, "plan the garden", r"\(turn 1\)")
    child.sendline("exit")
    child.expect(pexpect.EOF)
    [chatted] = sessions(tmp_path)
    for n in range(3):  # a script asking after the chat
        asked = run_co("ask", "-m", "function:co_scripts:chat", f"scripted {n}", cwd=tmp_path)
        assert asked.returncode == 0, asked.stderr
    listed = run_co("sessions", "list", cwd=tmp_path).stdout.splitlines()
    assert listed[0].split()[3] == "from" and [line.split()[4] for line in listed[1:]] == [
        "ask", "ask", "ask", "chat",
    ]  # fmt: skip
    only = run_co("sessions", "list", "--json", "--source", "chat", cwd=tmp_path).stdout
    assert [s["id"] for s in json.loads(only)] == [chatted["id"]]

    child = chat("--continue")
    assert f"resumed {chatted['id']}: plan the garden" in child.before
    child.sendline("/sessions")
    child.expect(chatted["id"])
    child.expect(r"\(and 3 from `co ask`: co sessions list --source ask\)")
    child.expect(PROMPT)
    turn(child, "and the roses?", r"\(turn 2\)")
    child.sendline("exit")
    child.expect(pexpect.EOF)
    by_id = {s["id"]: s for s in sessions(tmp_path)}
    assert by_id[chatted["id"]]["turns"] == 2


def test_co_ask_resumed_in_the_chat_becomes_a_chat(chat, tmp_path: Path) -> None:
    asked = run_co("ask", "--json", "-m", "function:co_scripts:chat", "from a script", cwd=tmp_path)
    sid = json.loads(asked.stdout)["session_id"]
    child = chat("--resume", sid)
    turn(child, "go on", r"\(turn 2\)")
    child.sendline("exit")
    child.expect(pexpect.EOF)
    [saved] = sessions(tmp_path)
    assert (saved["id"], saved["source"], saved["turns"]) == (sid, "chat", 2)


def test_co_ask_on_a_dead_server_reports_no_session_id(testplug: Path, tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    result = run_co(
        "ask", "--json", "-m", "openai-compatible:tiny", "--base-url", url, "hi", cwd=tmp_path
    )
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["session_id"] is None
    assert data["error"].startswith(f"cannot reach openai-compatible:tiny at {url}")
    assert url in data["hint"] and "ollama" not in data["hint"].lower()
    assert sessions(tmp_path) == []


def test_resume_completion_offers_saved_ids(co_dirs: Path, tmp_path: Path) -> None:
    from prompt_toolkit.document import Document

    from co_core.sessions.recorder import Recorder, resume_completions
    from co_core.sessions.store import SessionStore
    from co_core.ui.repl import SlashCompleter
    from tests.sessions_support import turn as text_turn

    with SessionStore() as store:
        recorder = Recorder.start(store, cwd=tmp_path)
        recorder.save(text_turn("plan the trip", "ok"))
        sid = recorder.info.id
        completer = SlashCompleter({}, lambda prefix: resume_completions(store, prefix))
        offered = list(completer.get_completions(Document(f"/resume {sid[:2]}"), None))
    assert [c.text for c in offered] == [sid]
    assert "plan the trip" in str(offered[0].display_meta)


def test_resume_of_an_unknown_session_is_one_clear_line(testplug: Path, tmp_path: Path) -> None:
    result = run_co("chat", "-m", "function:co_scripts:chat", "--resume", "abc123", cwd=tmp_path)
    assert result.returncode == 1
    assert "no session abc123" in result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_saved_model_is_the_resolved_one(testplug: Path, tmp_path: Path) -> None:
    result = run_co("ask", "-m", "function:co_scripts:chat", "hi", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [saved] = sessions(tmp_path)
    assert "co_scripts" in saved["model"] or "scripted" in saved["model"], saved["model"]


def test_compact_with_too_few_turns_says_so_as_plain_text(chat) -> None:
    """Nothing to compact is an answer, not a failure: no red "error:" line."""
    child = chat()
    turn(child, "message 0", r"\(turn 1\)")
    child.sendline("/compact")
    child.expect(r"nothing to compact: the conversation has \d+ turn\(s\) or fewer")
    assert "error:" not in child.before
    child.expect(PROMPT)
    child.sendline("exit")
    child.expect(pexpect.EOF)
