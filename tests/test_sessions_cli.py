"""``co sessions list | show | delete | export`` as a user runs them (a real ``co`` process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from co_core.sessions.recorder import Recorder
from co_core.sessions.store import SessionStore
from co_core.testing import run_co
from tests.sessions_support import tool_turn, turn


@pytest.fixture
def saved(co_dirs: Path, tmp_path: Path) -> list[str]:
    """Two sessions: a text one, and one with a tool call, a control character and usage."""
    with SessionStore() as store:
        first = Recorder.start(store, cwd=tmp_path, model="ollama:qwen3:4b")
        first.save(turn("plan the garden party", "Sure: chairs, lemonade."))
        second = Recorder.start(store, cwd=tmp_path, model="gemini:flash")
        history = tool_turn("read the \x1b[31mnotes", "call-1", "the notes say: bring cake")
        second.save(history, {"requests": 2, "input_tokens": 120, "output_tokens": 30})
        second.save([*history, *turn("thanks", "welcome")])
        return [first.info.id, second.info.id]


def test_list_json_has_every_session_newest_first(saved: list[str]) -> None:
    result = run_co("sessions", "list", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r["id"] for r in rows] == saved[::-1]
    newest = rows[0]
    assert newest["turns"] == 2 and newest["model"] == "gemini:flash"
    assert newest["input_tokens"] == 120 and newest["output_tokens"] == 30
    assert rows[1]["title"] == "plan the garden party"


def test_list_table_never_sends_escape_sequences(saved: list[str]) -> None:
    result = run_co("sessions", "list")
    assert result.returncode == 0, result.stderr
    assert "plan the garden party" in result.stdout
    assert "\x1b" not in result.stdout
    assert "\\x1b" in result.stdout


def test_show_by_prefix_prints_the_conversation(saved: list[str]) -> None:
    result = run_co("sessions", "show", saved[1][:5])
    assert result.returncode == 0, result.stderr
    assert "### You" in result.stdout and "thanks" in result.stdout
    assert "the notes say: bring cake" in result.stdout
    assert "read_note" in result.stdout
    assert "\x1b" not in result.stdout


def test_export_markdown_and_json_to_files(saved: list[str], tmp_path: Path) -> None:
    md, js = tmp_path / "out.md", tmp_path / "out.json"
    assert (
        run_co("sessions", "export", saved[0], "--format", "markdown", "-o", str(md)).returncode
        == 0
    )
    assert run_co("sessions", "export", saved[1], "--format", "json", "-o", str(js)).returncode == 0
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# plan the garden party")
    assert "Sure: chairs, lemonade." in text
    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["session"]["id"] == saved[1]
    kinds = [p["part_kind"] for m in data["messages"] for p in m["parts"]]
    assert kinds == ["user-prompt", "tool-call", "tool-return", "text", "user-prompt", "text"]
    # the JSON is pydantic-ai's own message format: it loads back as messages
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    assert len(ModelMessagesTypeAdapter.validate_python(data["messages"])) == 6


def test_delete_then_it_is_gone(saved: list[str]) -> None:
    result = run_co("sessions", "delete", saved[0])
    assert result.returncode == 0 and saved[0] in result.stdout
    again = run_co("sessions", "show", saved[0])
    assert again.returncode == 1
    assert [r["id"] for r in json.loads(run_co("sessions", "list", "--json").stdout)] == [saved[1]]


@pytest.mark.parametrize("bad", ["zz-not-hex", "../../etc/passwd", "ffffffffffff0", ""])
def test_bad_ids_are_one_clear_line(saved: list[str], bad: str) -> None:
    result = run_co("sessions", "show", bad)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("co: error:")


def test_bad_format_is_refused(saved: list[str]) -> None:
    result = run_co("sessions", "export", saved[0], "--format", "pdf")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr and "pdf" in result.stderr


def test_empty_store(co_dirs: Path) -> None:
    result = run_co("sessions", "list")
    assert result.returncode == 0 and "no saved sessions" in result.stdout
    assert json.loads(run_co("sessions", "list", "--json").stdout) == []
