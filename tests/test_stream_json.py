"""``co ask --stream-json`` as a script sees it: one JSON object a line, each valid
against docs/stream-json.schema.json, ``end`` last with the exit status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from co_core.testing import run_co

SCHEMA = json.loads(
    (Path(__file__).parents[1] / "docs" / "stream-json.schema.json").read_text(encoding="utf-8")
)
pytestmark = pytest.mark.usefixtures("testplug")


def stream(*args: str, cwd: Path) -> tuple[int, list[dict[str, Any]], str]:
    done = run_co("ask", "--stream-json", "-m", "function:co_scripts:chat", *args, cwd=cwd)
    lines = done.stdout.splitlines()
    events = [json.loads(line) for line in lines]
    for event in events:
        jsonschema.validate(event, SCHEMA)
    return done.returncode, events, done.stderr


def test_the_schema_is_a_valid_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_an_allowed_call_in_order(tmp_path: Path) -> None:
    code, events, _ = stream("colour blue", cwd=tmp_path)
    kinds = [e["type"] for e in events]
    assert code == 0
    assert kinds[:4] == ["start", "tool_call", "decision", "result"]
    assert kinds[-2:] == ["usage", "end"] and set(kinds[4:-2]) == {"text"}
    start, call, decision, result = events[:4]
    assert start["version"] == 1 and start["cwd"] == str(tmp_path)
    assert call["call_id"] == decision["call_id"] == result["call_id"]
    assert (call["tool"], call["arguments"]) == ("lookup", {"query": "blue"})
    assert (decision["effect"], decision["permission"]) == ("allow", "test:lookup:blue")
    assert (result["status"], result["output"]) == ("ok", "- blue: https://example.org/blue")
    text = "".join(e["text"] for e in events if e["type"] == "text")
    end = events[-1]
    assert end["output"] == text == "Tool said: - blue: https://example.org/blue"
    assert (end["exit_code"], end["denied"], end["session_id"]) == (0, 0, start["session_id"])


def test_a_denied_call_ends_with_exit_3(tmp_path: Path) -> None:
    code, events, stderr = stream("write a.txt hello", cwd=tmp_path)
    assert code == 3 and not (tmp_path / "a.txt").exists()
    decision = next(e for e in events if e["type"] == "decision")
    result = next(e for e in events if e["type"] == "result")
    assert (decision["effect"], decision["source"]) == ("deny", "headless")
    assert result["status"] == "denied" and "--approve" in result["output"]
    assert events[-1]["type"] == "end" and events[-1]["exit_code"] == 3
    assert events[-1]["denied"] == 1
    assert "--approve" in stderr  # the usual line on stderr too


def test_an_approved_call_with_approve(tmp_path: Path) -> None:
    code, events, _ = stream("--approve", "fs:write:*", "write a.txt hello", cwd=tmp_path)
    assert code == 0 and (tmp_path / "a.txt").read_text() == "hello"
    decision = next(e for e in events if e["type"] == "decision")
    assert (decision["effect"], decision["source"]) == ("allow", "flag")


def test_an_error_still_ends_with_end(tmp_path: Path) -> None:
    done = run_co(
        "ask", "--stream-json", "-m", "openai-compatible:nothing", "hello",
        cwd=tmp_path, env={"CO_BASE_URL": "http://127.0.0.1:9/v1"},
    )  # fmt: skip
    events = [json.loads(line) for line in done.stdout.splitlines()]
    for event in events:
        jsonschema.validate(event, SCHEMA)
    assert done.returncode == 1
    assert [e["type"] for e in events][-2:] == ["error", "end"]
    assert events[-1]["exit_code"] == 1 and events[-2]["message"]


def test_json_and_stream_json_are_one_or_the_other(tmp_path: Path) -> None:
    done = run_co("ask", "--json", "--stream-json", "hi", cwd=tmp_path)
    assert done.returncode == 2 and "choose one" in done.stderr and done.stdout == ""
