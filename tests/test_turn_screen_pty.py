"""What ``co chat`` shows while a turn runs, read off a terminal's screen (pyte) in a pty
(issue 36.5, 36.7): the spinner says what runs; keys typed meanwhile are not drawn onto
the spinner's line, never answer a question, and wait on the next ``co>`` line; an answer
Co gives in a small model's place replaces what the model said instead, never pasted on.
"""

from __future__ import annotations

import io
import time

import pexpect
import pyte

PROMPT = "co>"
ROWS, COLUMNS = 40, 120


def screen_of(raw: str) -> list[str]:
    screen = pyte.HistoryScreen(COLUMNS, ROWS, history=2000)
    pyte.Stream(screen).feed(raw)
    top = ["".join(ch.data for ch in line.values()) for line in screen.history.top]
    return [line.rstrip() for line in [*top, *screen.display]]


def _watched(child: pexpect.spawn) -> io.StringIO:
    seen = io.StringIO()
    child.logfile_read = seen
    return seen


def test_the_spinner_says_what_runs_and_typing_waits_for_the_prompt(chat) -> None:
    child = chat()
    seen = _watched(child)
    child.sendline("slow 4")
    child.expect(r"running slow\(seconds=4\.0\)")  # not "Co is thinking…"
    child.expect(r"· \d+ s · Ctrl\+C cancels")  # how long, and how to stop it
    child.send("and then the next one")  # typed ahead, no Enter
    child.expect("Tool said: waited 4.0s")
    child.expect(r"co> and then the next one")  # waiting on the chat's line, unsent
    lines = screen_of(seen.getvalue())
    assert not any("running" in line and "next one" in line for line in lines)
    assert sum("and then the next one" in line for line in lines) == 1  # drawn once
    child.sendline(" please")  # it is the line being typed: edited, then sent
    child.expect(r"\(turn 2\)")
    child.expect(PROMPT)
    assert "You said and then the next one please (turn 2)" in "\n".join(screen_of(seen.getvalue()))
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_text_typed_ahead_never_answers_an_approval(chat, tmp_path) -> None:
    child = chat()
    child.sendline("later note.txt")  # a slow call, then a write that needs approval
    child.expect(r"running slow")
    child.sendline("yes")  # typed for the chat while the slow call runs
    child.expect(r"Allow\?")
    time.sleep(0.5)  # the prompt reads the keyboard: what was typed before is not in it
    child.sendline("n")
    child.expect("Reason for Co")
    child.sendline("")
    child.expect("denied")
    child.expect(r"co> yes")  # kept for the chat
    assert not (tmp_path / "note.txt").exists()
    child.sendcontrol("u")  # not to be sent after all
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_co_s_answer_in_a_small_model_s_place_replaces_what_it_said(chat) -> None:
    child = chat("-m", "function:co_scripts:small")
    seen = _watched(child)
    child.sendline("contra blue")  # the model says nothing matches; the lookup found one
    child.expect(r"\d+ in · \d+ out tokens")
    child.expect(PROMPT)
    lines = screen_of(seen.getvalue())
    call = lines.index("⚙ lookup(query=blue)")
    assert lines[call + 1] == "  → 1 found: - blue: https://example.org/blue"
    assert lines[call + 2] == "- blue: https://example.org/blue"  # Co's answer, on its own
    assert not any("Nothing matches" in line for line in lines)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
