"""MCP servers live as long as the conversation: started once, reused by every turn,
stopped at exit; a hung call ends as ``timed out`` and a server that keeps hanging is
taken out. Real servers over stdio (tests/mcp_test_server.py), Co's real conversation."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp_support import SERVER, Chat, alive, app_with, sdk_server

from co_core.kernel import paths
from co_core.testing import traced

ALLOW = [{"match": "mcp:**", "effect": "allow"}]


def starts(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def test_three_turns_start_the_server_once_and_a_hung_call_times_out_in_one_line(
    co_dirs: Path, tmp_path: Path
) -> None:
    started = tmp_path / "starts.txt"
    server = sdk_server(env={"STARTS_FILE": str(started)}, call_timeout=1)
    chat = Chat(app_with({"t": server}, cwd=tmp_path, rules=ALLOW), tmp_path)
    try:
        first = chat.turn([("t_echo", {"text": "one"})])
        hung = chat.turn([("t_hang", {})])
        third = chat.turn([("t_echo", {"text": "three"})])
        (pid,) = starts(started)  # one process, one initialize, for three turns
        assert alive(pid)
    finally:
        assert chat.close() == []
    assert not alive(pid)  # stopped when the conversation closed
    assert [c.status for c in first.calls] == ["ok"]
    (call,) = hung.calls
    assert call.status == "timed out"
    assert call.result == "MCP server 't' did not answer hang within 1 s"
    assert hung.output == "turn done after 1 calls"  # the model was told, and answered
    assert [c.status for c in third.calls] == ["ok"] and third.calls[0].result == "echo: three"
    assert chat.lines == [
        "echo: one",
        "timed out: MCP server 't' did not answer hang within 1 s",
        "echo: three",
    ]
    assert chat.user.warnings == []  # one time-out is the call's, not the server's


def test_a_server_that_times_out_twice_is_taken_out_for_the_session(
    co_dirs: Path, tmp_path: Path
) -> None:
    started = tmp_path / "starts.txt"
    servers = {
        "t": sdk_server(env={"STARTS_FILE": str(started)}, call_timeout=0.5),
        "u": sdk_server(),
    }
    chat = Chat(app_with(servers, cwd=tmp_path, rules=ALLOW), tmp_path)
    try:
        chat.turn([("t_hang", {}), ("t_hang", {"seconds": 60})])
        later = chat.turn([("t_echo", {"text": "x"}), ("u_echo", {"text": "y"})])
        (pid,) = starts(started)
    finally:
        assert chat.close() == []
    (warning,) = chat.user.warnings
    assert warning.startswith("MCP server 't' timed out twice: the last call was hang; its tools")
    assert "\n" not in warning
    assert [c.status for c in later.calls] == ["retry", "ok"]  # t's tools are gone, u's work
    assert later.calls[0].result == "unknown tool 't_echo'"
    assert not alive(pid)


def test_a_server_that_does_not_answer_at_start_is_said_to_have_timed_out(
    co_dirs: Path, tmp_path: Path
) -> None:
    started = tmp_path / "starts.txt"
    stuck = sdk_server(args=[SERVER, "--hang-at-start"], env={"STARTS_FILE": str(started)})
    chat = Chat(
        app_with({"stuck": {**stuck, "timeout": 1}, "t": sdk_server()}, cwd=tmp_path, rules=ALLOW),
        tmp_path,
    )
    try:
        turn = chat.turn([("t_echo", {"text": "still here"})])
        (pid,) = starts(started)
    finally:
        assert chat.close() == []
    assert [c.result for c in turn.calls] == ["echo: still here"]
    (warning,) = chat.user.warnings
    assert warning.startswith("MCP server 'stuck' did not start: timed out after 1 s;")
    assert not alive(pid)


def test_server_start_up_is_a_span_and_a_turn_that_waits_for_it_says_so(
    co_dirs: Path, tmp_path: Path
) -> None:
    app = app_with({"t": sdk_server()}, cwd=tmp_path, rules=ALLOW)
    with traced(app.settings):
        chat = Chat(app, tmp_path)
        try:
            chat.turn([("t_echo", {"text": "x"})])
            chat.turn([("t_echo", {"text": "y"})])
        finally:
            chat.close()
    import sqlite3

    db = sqlite3.connect(paths.data_dir() / "traces.db")
    rows = db.execute(
        "SELECT name, attributes, parent_id FROM spans ORDER BY start_time"
    ).fetchall()
    names = [name for name, _, _ in rows]
    (start,) = [json.loads(a) for n, a, _ in rows if n == "co.mcp.start"]
    assert (start["co.server"], start["co.status"], start["co.tools"]) == ("t", "running", 5)
    assert names.count("co.mcp.wait") <= 1  # only a turn that came before the server waits
    assert names.count("co.turn") == 2


@pytest.mark.parametrize("leave", ["terminal closes", "ctrl-d", "ctrl-c twice"])
def test_nothing_is_left_running_however_co_chat_ends(
    chat: object, co_dirs: Path, tmp_path: Path, leave: str
) -> None:
    """``co chat`` in a pty, its MCP server in the middle of a call that hangs, and the
    user leaves: the terminal goes away (SIGHUP), Ctrl+D, or Ctrl+C twice. Co exits, and
    the server with it (this one stops only when it is stopped)."""
    import os
    import signal
    import time

    from co_core.testing import write_settings

    started = tmp_path / "starts.txt"
    server = {
        "command": sys.executable,
        "args": [SERVER, "--linger"],  # stops only when Co stops it
        "env": {"STARTS_FILE": str(started)},
    }
    write_settings({"mcp_servers": {"t": server}, "policy": {"rules": ALLOW}}, co_dirs)
    child = chat()  # type: ignore[operator]
    child.sendline('call t_echo {"text": "hi"}')
    child.expect("Tool said: echo: hi")
    child.expect("co>")
    (pid,) = starts(started)
    assert alive(pid)
    co = child.pid
    if leave == "terminal closes":
        child.sendline("call t_hang {}")
        child.expect("t_hang")
        os.kill(co, signal.SIGHUP)
    elif leave == "ctrl-d":
        child.sendcontrol("d")
        child.expect("Session ended.")
    else:
        child.sendintr()
        child.expect("Press Ctrl\\+C again")
        child.sendintr()
        child.expect("Session ended.")
    deadline = time.monotonic() + 30
    while (alive(pid) or alive(co)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(co) and not alive(pid)
