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


def test_compact_keeps_the_recent_turns_and_the_store_keeps_all(chat, tmp_path: Path) -> None:
    child = chat()
    for n in range(4):
        turn(child, f"message {n}", rf"\(turn {n + 1}\)")
    turn(child, "/compact", r"Compacted: \d+ older messages summarised")
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
