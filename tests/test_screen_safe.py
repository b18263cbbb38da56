"""One terminal-safe writer: text from a model, a tool or an MCP server is shown, not obeyed.

Control characters (escape sequences: a window title, erase-line, cursor moves), bidi
overrides and zero-width characters are written out as escapes (``\\x1b``, ``\\u202e``)
everywhere Co prints such text: ``co chat``'s tool line, result lines and approval block,
``co ask``'s stderr and (on a terminal) its answer. A file name mixing look-alike scripts
(a Cyrillic ``е`` in ``rеport.txt``) is marked by writing those letters out. And the tool
line shows the same characters as the approval: the call as it will run.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pexpect
import pyte
import pytest
from mcp_support import SERVER

from co_core.kernel.visible import on_screen, unseen
from co_core.testing import write_settings

PROMPT = "co>"
HIDING = ["\x1b]0;pwned\x07", "\x1b[2K", "\x1b[1A", "\r", "\x08", "\u202e", "\u2066", "\u200b"]
HIDING += ["\ufeff", "\u2028", "\x85", "\x9b31m", "\x00", "\x7f", "\u061c", "\u3164"]


def _text(rng: random.Random) -> str:
    words = ["report", "rеport", "setup.ехе", "отчёт", "café", "Αpple", "ok", "日本", "a b"]
    out = ""
    for _ in range(rng.randint(1, 6)):
        out += rng.choice(words) + rng.choice([" ", "", *HIDING])
    return out


def test_nothing_a_terminal_acts_on_survives_the_writer() -> None:
    rng = random.Random(6)
    for _ in range(20_000):
        text = _text(rng)
        for one_line in (False, True):
            shown = on_screen(text, one_line=one_line)
            kept = {"\t"} if one_line else {"\t", "\n"}
            assert not [ch for ch in shown if unseen(ch) and ch not in kept], (text, shown)
            assert on_screen(shown, one_line=one_line) == shown  # written once, stays


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("rеport.txt", "r\\u0435port.txt"),  # a Cyrillic е inside a Latin word
        ("setup.ехе", "setup.\\u0435\\u0445\\u0435"),  # a word of look-alikes beside Latin
        ("Αpple.md", "\\u0391pple.md"),  # a Greek capital alpha
        ("раураl-login.html", "\\u0440\\u0430\\u0443\\u0440\\u0430l-login.html"),
        ("отчёт.txt", "отчёт.txt"),  # Russian word, Latin extension: nothing odd
        ("вес.csv", "вес.csv"),
        ("café-menu.txt", "café-menu.txt"),
        ("日本語.txt", "日本語.txt"),
    ],
)
def test_look_alike_letters_in_names_are_written_out(name: str, shown: str) -> None:
    assert on_screen(name) == shown
    assert on_screen(f"see {name} now") == f"see {shown} now"


def screen_of(raw: str, columns: int = 120) -> list[str]:
    screen = pyte.HistoryScreen(columns, 40, history=2000)
    pyte.Stream(screen).feed(raw)
    top = ["".join(ch.data for ch in line.values()) for line in screen.history.top]
    return [line.rstrip() for line in [*top, *screen.display]]


def _spawn(chat, cwd: Path | None = None) -> pexpect.spawn:
    child = chat(cwd=cwd)
    child.seen = io.StringIO()
    child.logfile_read = child.seen
    return child


def test_co_chat_shows_the_tool_line_and_approval_with_everything_written_out(
    chat, tmp_path: Path
) -> None:
    name = "rеport\u202etxt.exe"
    text = "hello\x1b]0;pwned\x07\x1b[2Kgone \u200bhidden"
    child = _spawn(chat)
    child.sendline("call write_note " + json.dumps({"name": name, "text": text}))
    child.expect("Allow\\?")
    child.sendline("y")
    child.expect("Tool said: wrote")
    child.expect(PROMPT)
    raw = child.seen.getvalue()
    for bad in ("\x1b]0;pwned", "\u202e", "\u200b", "\u0435"):
        assert bad not in raw, repr(bad)
    lines = screen_of(raw)
    call = next(line for line in lines if line.startswith("⚙ write_note("))
    assert "name=r\\u0435port\\u202etxt.exe" in call, call
    assert "text=hello\\x1b]0;pwned\\x07\\x…)" in call, call  # cut short, written out
    # the approval block shows the same characters
    assert "  name: r\\u0435port\\u202etxt.exe" in lines
    assert "  text: hello\\x1b]0;pwned\\x07\\x1b[2Kgone \\u200bhidden" in lines
    assert "  permission: fs:write:r\\u0435port\\u202etxt.exe" in lines
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_the_tool_line_shows_the_call_the_approval_shows(
    chat, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36: a server that HTML-escapes its prompt (llama-cpp-python's
    chatml-function-calling) gets `echo &#39;x&#39;` back from the model; bash runs
    `echo &` (the rest is a comment). The tool line shows what the approval shows."""
    monkeypatch.setenv("CO_LOAD_PLUGINS", "testplug,shell")
    monkeypatch.setenv("CO_SHELL_SANDBOX", "bubblewrap")
    child = _spawn(chat)
    child.sendline("run echo &#39;germanic-languages&#39; &gt;Gruybeau")
    child.expect("Allow\\?")
    child.sendline("n")
    child.expect("Reason for Co")
    child.sendline("")
    child.expect(PROMPT)
    lines = screen_of(child.seen.getvalue())
    call = next(line for line in lines if line.startswith("⚙ run_shell_command("))
    approved = next(line for line in lines if line.startswith("  cmd: "))
    assert call == f"⚙ run_shell_command(cmd={approved[len('  cmd: ') :]})", (call, approved)
    assert "&#39;" not in call
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


@pytest.mark.usefixtures("testplug")
def test_co_ask_stderr_writes_out_escapes_from_arguments_and_mcp_results(
    co_dirs: Path, tmp_path: Path
) -> None:
    write_settings(
        {"mcp_servers": {"echoer": {"command": sys.executable, "args": [SERVER]}}}, co_dirs
    )
    text = "fine\x1b]0;pwned\x07\x1b[2K\x1b[1Agone \u202eexe.txt rеport.txt"
    done = subprocess.run(
        [sys.executable, "-m", "co_core", "ask", "-m", "function:co_scripts:chat",
         "--approve", "mcp:echoer:echo", "call echoer_echo " + json.dumps({"text": text})],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=dict(os.environ),
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not [ch for ch in done.stderr if unseen(ch) and ch != "\n"], repr(done.stderr)
    shown = "fine\\x1b]0;pwned\\x07\\x1b[2K\\x1b[1Agone \\u202eexe.txt r\\u0435port.txt"
    assert f"co: tool: echoer_echo(text={shown[:39]}…)" in done.stderr, done.stderr
    assert "co:   -> " in done.stderr and "pwned\\x07" in done.stderr.split("co:   -> ")[1]
    # a pipe gets the answer as it is (it is data); a terminal would get it written out
    assert "\x1b]0;pwned\x07" in done.stdout


@pytest.mark.usefixtures("testplug")
def test_co_ask_writes_its_answer_out_on_a_terminal(co_dirs: Path, tmp_path: Path) -> None:
    child = pexpect.spawn(
        sys.executable, ["-m", "co_core", "ask", "-m", "function:co_scripts:chat",
                         "say \x1b]0;pwned\x07 \u202eok"],
        env=dict(os.environ), cwd=str(tmp_path), encoding="utf-8", timeout=60,
    )  # fmt: skip
    child.expect(pexpect.EOF)
    out = child.before
    assert "\x1b]0;pwned" not in out and "\u202e" not in out
    assert "\\x1b]0;pwned\\x07 \\u202eok" in out
