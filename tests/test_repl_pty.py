"""``co chat`` in a real pseudo-terminal (pexpect), with scripted models in the subprocess."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pexpect

CO = str(Path(sys.executable).parent / "co")
PROMPT = "co>"


def ask(child: pexpect.spawn, text: str) -> None:
    child.sendline(text)


def test_streams_text_while_the_model_is_still_answering(chat, tmp_path: Path) -> None:
    child = chat("-m", "function:co_scripts:gated")
    gate = tmp_path / "gate"
    ask(child, f"first {gate}")
    child.expect(r"Before the gate \(first\)")  # on screen while the model waits on the gate
    assert "After the gate" not in child.before
    gate.write_text("open")
    child.expect("After the gate")
    child.expect(PROMPT)


def test_memory_tool_lines_and_slash_commands(chat, tmp_path: Path) -> None:
    child = chat()
    ask(child, "hello there")
    child.expect(r"\(turn 1\)")
    child.expect(PROMPT)
    ask(child, "colour blue")
    child.expect("⚙ lookup\\(query=blue\\)")
    child.expect("→ 1 found: - blue: https://example.org/blue")
    child.expect("Tool said: - blue: https://example.org/blue")
    child.expect(PROMPT)
    ask(child, "and again")
    child.expect(r"\(turn 3\)")
    child.expect(PROMPT)
    ask(child, "/tools")
    child.expect(r"write_note\s+testplug\s+write\s+fs:write:\{name\}")
    child.expect(PROMPT)
    ask(child, "/ping me")
    child.expect("pong me")
    child.expect(PROMPT)
    ask(child, "/clear")
    child.expect("Conversation cleared")
    child.expect(PROMPT)
    ask(child, "fresh")
    child.expect(r"\(turn 1\)")
    child.expect(PROMPT)
    ask(child, "/nope")
    child.expect("unknown command /nope")
    child.expect(PROMPT)
    ask(child, "exit")
    child.expect("Session ended")
    child.expect(pexpect.EOF)
    history = (tmp_path / "co-data" / "history").read_text()
    assert "hello there" in history and "colour blue" in history


def test_escape_sequences_in_tool_calls_are_shown_not_obeyed(chat, tmp_path: Path) -> None:
    """A model (or a prompt injection) cannot retitle the terminal or hide part of what
    the user approves behind a carriage return: control characters are written out."""
    child = chat()
    seen: list[str] = []
    ask(child, "osc")
    child.expect("Allow\\?")
    seen.append(child.before)
    child.sendline("y")
    child.expect("Tool said: wrote")
    seen.append(child.before)
    screen = "".join(seen)
    assert r"text: harmless\x1b]0;pwned\x07\rrm -rf ~" in screen  # the approval prompt
    assert r"text=harmless\x1b]0;pwned\x07\rrm -rf ~)" in screen  # the tool line: the same
    assert "\x1b]0;pwned" not in screen and "\rrm -rf" not in screen
    assert (tmp_path / "t.txt").read_bytes() == b"harmless\x1b]0;pwned\x07\rrm -rf ~"


def test_approval_yes_no_and_reason(chat, tmp_path: Path) -> None:
    child = chat()
    ask(child, "write yes.txt one")
    child.expect("fs:write:yes.txt")
    child.expect("Allow\\?")
    child.sendline("y")
    child.expect("Tool said: wrote 3 characters")
    child.expect(PROMPT)
    assert (tmp_path / "yes.txt").read_text() == "one"
    ask(child, "write no.txt two")
    child.expect("Allow\\?")
    child.sendline("not today")
    child.expect("Tool said: The user denied this call: not today")
    child.expect(PROMPT)
    assert not (tmp_path / "no.txt").exists()
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    history = (tmp_path / "co-data" / "history").read_text()
    assert "write yes.txt one" in history and "not today" not in history


def test_approval_shows_the_call_and_remembers_a_session_yes(chat, tmp_path: Path) -> None:
    child = chat()
    ask(child, "write s.txt one")
    child.expect(r"\? write_note  \(plugin testplug, risk write\)")
    child.expect("name: s.txt")
    child.expect("text: one")
    child.expect("permission: fs:write:s.txt")
    child.expect(r"why: default for write-risk tools \[default\]")
    child.expect("Allow\\?")
    child.sendline("s")
    child.expect("Tool said: wrote 3 characters")
    child.expect(PROMPT)
    ask(child, "write s.txt second")
    child.expect("Tool said: wrote 6 characters")  # the same call again: not asked
    assert "Allow?" not in child.before
    child.expect(PROMPT)
    assert (tmp_path / "s.txt").read_text() == "second"
    ask(child, "write other.txt three")  # a different key is still asked
    child.expect("Allow\\?")
    child.sendline("y")
    child.expect("Tool said: wrote 5 characters")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_approval_no_then_a_reason_reaches_the_model(chat, tmp_path: Path) -> None:
    child = chat()
    ask(child, "write keep.txt gone")
    child.expect("Allow\\?")
    child.sendline("n")
    child.expect("Reason for Co")
    child.sendline("that file is precious")
    child.expect("Tool said: The user denied this call: that file is precious")
    child.expect(PROMPT)
    assert not (tmp_path / "keep.txt").exists()
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_always_for_this_project_is_kept_for_the_next_chat(chat, tmp_path: Path) -> None:
    child = chat()
    ask(child, "write proj.txt one")
    child.expect("Allow\\?")
    child.sendline("a")
    child.expect("Tool said: wrote 3 characters")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    again = chat()  # a new co chat process in the same folder
    ask(again, "write proj.txt again")
    again.expect("Tool said: wrote 5 characters")
    assert "Allow?" not in again.before
    again.expect(PROMPT)
    assert (tmp_path / "proj.txt").read_text() == "again"
    again.sendcontrol("d")
    again.expect(pexpect.EOF)


def test_several_calls_are_listed_then_asked_one_by_one(chat, tmp_path: Path) -> None:
    child = chat()
    ask(child, "write2 a.txt b.txt")
    child.expect("2 calls need your approval")
    child.expect("1. write_note: fs:write:a.txt")
    child.expect("2. write_note: fs:write:b.txt")
    child.expect("permission: fs:write:a.txt")
    child.expect("Allow\\?")
    child.sendline("y")
    child.expect("permission: fs:write:b.txt")
    child.expect("Allow\\?")
    child.sendline("not b")
    child.expect("Tool said: The user denied this call: not b")
    child.expect(PROMPT)
    assert (tmp_path / "a.txt").read_text() == "A.TXT"
    assert not (tmp_path / "b.txt").exists()
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_yolo_is_in_every_prompt_line(chat, tmp_path: Path) -> None:
    child = chat("--yolo")
    child.sendline("write y.txt fast")
    child.expect("Tool said: wrote 4 characters")  # not asked
    child.expect(r"\[yolo\]")
    child.expect(PROMPT)
    assert (tmp_path / "y.txt").read_text() == "fast"
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_ctrl_c_cancels_a_run_and_a_follow_up_works(chat) -> None:
    child = chat()
    ask(child, "slow 30")
    child.expect("⚙ slow")
    child.sendintr()
    child.expect("Cancelled")
    child.expect(PROMPT)
    ask(child, "are you still there")
    child.expect(r"\(turn 2\)")  # the cancelled question is remembered, the history is valid
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect("Session ended")
    child.expect(pexpect.EOF)


def test_double_ctrl_c_at_the_prompt_exits_and_closes_resources(chat, tmp_path: Path) -> None:
    child = chat()
    ask(child, "resource")
    child.expect("Tool said: resource ready")
    child.expect(PROMPT)
    child.sendintr()
    child.expect("Press Ctrl\\+C again to exit")
    child.sendintr()
    child.expect("Session ended")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "closed").read_text() == "closed"


def test_ctrl_d_exits_and_closes_resources(chat, tmp_path: Path) -> None:
    child = chat()
    ask(child, "resource")
    child.expect("Tool said: resource ready")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect("Session ended")
    child.expect(pexpect.EOF)
    assert (tmp_path / "closed").read_text() == "closed"


def test_model_failure_is_one_line_and_the_session_survives(chat, monkeypatch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("CO_BASE_URL", f"http://127.0.0.1:{port}/v1")
    child = chat()
    ask(child, "remember me")
    child.expect(r"\(turn 1\)")
    child.expect(PROMPT)
    ask(child, "/model openai-compatible:gone")
    child.expect("model: openai-compatible:gone")
    child.expect(PROMPT)
    ask(child, "hello?")
    child.expect("cannot reach openai-compatible:gone")
    child.expect("hint:")
    child.expect(PROMPT)
    ask(child, "/model function:co_scripts:chat")
    child.expect(PROMPT)
    ask(child, "back again")
    child.expect(r"\(turn 2\)")  # history survived (the failed question never reached a model)
    child.expect(PROMPT)
    ask(child, "quit")
    child.expect(pexpect.EOF)
    assert "Traceback" not in child.before


def test_slash_completion_and_multi_line_input(chat) -> None:
    child = chat()
    child.send("/he")
    child.send("\t")
    child.expect("/help")
    child.send("\r")
    child.expect("Ctrl\\+C cancels a running turn")
    child.expect(PROMPT)
    child.send("first line")
    child.send("\x1b\r")  # Esc then Enter: a new line, not a send
    child.send("second line\r")
    ansi = r"(?:\x1b\[[0-9;]*m|\s|\*)+"
    child.expect(f"You said{ansi}first line{ansi}second line")  # one two-line prompt
    child.expect(r"\(turn 1\)")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_bad_settings_stop_chat_with_one_line(testplug: Path) -> None:
    # Settings are checked in the background once the prompt is up; a bad one still ends
    # Co at once, naming the file and the key.
    (testplug / "settings.json").write_text('{"retries": 99}')
    child = pexpect.spawn(CO, ["chat"], env=dict(os.environ), encoding="utf-8", timeout=60)
    child.expect(r"settings\.json: retries: ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert "Traceback" not in child.before


def test_plugin_markers_join_the_prompt_line(chat, monkeypatch) -> None:
    # prompt_markers needs validated settings, so the marker arrives just after the prompt
    # appears: the prompt line is redrawn with it without a key being pressed.
    monkeypatch.setenv("CO_TEST_MARKER", "no net")
    child = chat()
    child.expect(r"\[no net\] ")
    ask(child, "hello")
    child.expect(r"\(turn 1\)")
    child.expect(r"\[no net\] ")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_usage_line_after_each_turn_and_cost(chat) -> None:
    child = chat()
    ask(child, "hello")
    child.expect(r"\(turn 1\)")
    child.expect(r"in · \d+ out tokens")
    child.expect(PROMPT)
    ask(child, "/cost")
    child.expect("This session: 1 turn")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_continue_picks_up_the_last_session(chat) -> None:
    child = chat()
    ask(child, "remember this")
    child.expect(r"\(turn 1\)")
    child.expect(PROMPT)
    ask(child, "/context")
    child.expect("%")
    child.expect(PROMPT)
    ask(child, "exit")
    child.expect(pexpect.EOF)
    again = chat("--continue")
    ask(again, "and now")
    again.expect(r"\(turn 2\)")  # the stored conversation came back
    again.expect(PROMPT)
    ask(again, "/sessions")
    again.expect("remember this|1 turn|turns")
    again.expect(PROMPT)
    again.sendcontrol("d")
    again.expect(pexpect.EOF)


def test_an_answer_co_gives_itself_is_shown(chat, monkeypatch) -> None:
    # The model calls a tool whose service is not set up: Co answers with how to set it up.
    monkeypatch.setenv("CO_TEST_UNREADY", "1")
    child = chat()
    ask(child, "resource")
    child.expect("The marker service is not set up: run .*co marker login")
    child.expect(PROMPT)
    ask(child, "/tools")
    child.expect(r"use_resource\s+testplug\s+read\s+\S+\s+\(not offered\)")
    child.expect("Not offered to the model until set up:")
    child.expect(PROMPT)
    ask(child, "exit")
    child.expect("Session ended")
