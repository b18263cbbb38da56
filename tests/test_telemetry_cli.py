"""``co traces`` and ``co logs`` (a real Datasette, queried over its JSON API)."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_core import telemetry
from co_core.testing import make_app, run_co


def _script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    calls = sum(isinstance(p, ToolCallPart) for m in messages for p in getattr(m, "parts", []))
    if calls == 0:
        return ModelResponse(parts=[ToolCallPart("search_notes", {"query": "otel"})])
    if calls == 1:
        return ModelResponse(parts=[ToolCallPart("send_mail", {"to": "x"})])
    return ModelResponse(parts=[TextPart("Found 2 notes.")])


def scripted_turns(count: int = 1) -> None:
    app = make_app({})
    telemetry.setup_tracing(app.settings)
    telemetry.record_plugin_loads(app)  # a co.startup root: not a turn
    model = FunctionModel(_script, model_name="scripted")
    agent = Agent(model, name="co", capabilities=telemetry.capabilities())

    @agent.tool_plain
    def search_notes(query: str) -> str:
        """Search notes."""
        return "2 notes"

    @agent.tool_plain
    def send_mail(to: str) -> str:
        """Send mail."""
        raise ModelRetry("the address 'x' is not an email address")

    for i in range(count):
        with telemetry.turn(f"session-{i}", model="function:scripted"):
            agent.run_sync("find my otel notes")
    telemetry.shutdown_tracing()


@pytest.fixture
def db(co_dirs: Path) -> Iterator[Path]:
    yield co_dirs.parent / "co-data" / "traces.db"
    telemetry.shutdown_tracing()


def test_traces_shows_last_turns_as_trees(db: Path) -> None:
    scripted_turns(3)
    result = run_co("traces", "-n", "2", env={"COLUMNS": "160"})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.count("co.turn") == 2  # -n 2 of the 3 turns
    assert "co.startup" not in out and "co.plugin.load" not in out
    assert "invoke_agent co" in out and "chat scripted" in out
    assert "execute_tool search_notes" in out
    line = next(x for x in out.splitlines() if "execute_tool search_notes" in x)
    assert line.rstrip().endswith("ok") and "ms" in line
    failed = next(x for x in out.splitlines() if "execute_tool send_mail" in x)
    assert "retry: ToolRetryError" in failed
    assert "in /" in out and "out tokens" in out  # tokens shown on model requests
    # tree structure: tool calls are drawn one level deeper than the agent run
    run_col = next(x for x in out.splitlines() if "invoke_agent" in x).index("invoke_agent")
    assert line.index("execute_tool") > run_col


def test_traces_without_database_says_so(db: Path) -> None:
    result = run_co("traces")
    assert result.returncode == 1
    assert "no traces yet" in result.stderr and "Traceback" not in result.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


@pytest.fixture
def datasette(db: Path) -> Iterator[str]:
    scripted_turns(2)
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "co_core", "logs", "--port", str(port), "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(os.environ),
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            _get(f"{url}/-/versions.json")
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                output = proc.stdout.read().decode() if proc.stdout else ""
                proc.kill()
                pytest.fail(f"co logs did not serve: {output}")
            time.sleep(0.2)
    yield url
    os.killpg(proc.pid, 2)  # Ctrl-C, as a user stops it
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()


def test_logs_serves_canned_queries_over_http(datasette: str) -> None:
    turns = _get(f"{datasette}/traces/recent_turns.json?_shape=array")
    assert len(turns) == 2
    assert {t["session"] for t in turns} == {"session-0", "session-1"}
    for turn in turns:
        assert turn["name"] == "co.turn"
        assert turn["model_requests"] == 3 and turn["tool_calls"] == 2
        assert turn["input_tokens"] > 0 and turn["output_tokens"] > 0
        assert turn["cost_usd"] == 0  # a local model

    tools = _get(f"{datasette}/traces/tool_calls.json?_shape=array")
    assert sorted((t["tool"], t["outcome"]) for t in tools) == [
        ("search_notes", "ok"),
        ("search_notes", "ok"),
        ("send_mail", "retry"),
        ("send_mail", "retry"),
    ]
    assert all(t["duration_ms"] is not None for t in tools)
    failed = next(t for t in tools if t["outcome"] == "retry")
    assert failed["error"].endswith("ToolRetryError")  # its text is content: not recorded

    usage = _get(f"{datasette}/traces/usage_by_model_and_day.json?_shape=array")
    assert len(usage) == 1
    (row,) = usage
    assert row["model"] == "scripted" and row["requests"] == 6
    assert row["day"] == time.strftime("%Y-%m-%d", time.gmtime())
    assert row["input_tokens"] == sum(t["input_tokens"] for t in turns)
    assert row["unpriced_requests"] == 0


def test_logs_metadata_names_and_describes_the_table(datasette: str) -> None:
    meta = _get(f"{datasette}/-/metadata.json")
    database = meta["databases"]["traces"]
    assert "one row per span" in database["tables"]["spans"]["description"].lower()
    assert "parent_id" in database["tables"]["spans"]["columns"]
    assert set(database["queries"]) == {
        "recent_turns",
        "turn",
        "tool_calls",
        "model_requests",
        "usage_by_model_and_day",
    }
    page = urllib.request.urlopen(f"{datasette}/traces", timeout=10).read().decode()
    assert "Tokens and cost by model and day" in page


def test_logs_without_datasette_says_how_to_install_it(db: Path) -> None:
    scripted_turns(1)
    probe = (
        "import sys; sys.modules['datasette'] = None; "
        "sys.argv = ['co', 'logs', '--no-browser']; "
        "from co_core.cli.main import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert "pip install 'co-core[logs]'" in result.stderr
    assert "Traceback" not in result.stderr


def _traces_status(env: dict[str, str] | None = None) -> dict[str, Any]:
    result = run_co("status", "--json", env=env)
    return next(r for r in json.loads(result.stdout) if r["name"] == "traces")


def test_status_says_where_traces_go(db: Path) -> None:
    assert _traces_status()["detail"] == f"{db} (not created yet); content off"
    scripted_turns(1)
    row = _traces_status({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert row["state"] == "ok"
    count = sqlite3.connect(db).execute("SELECT count(*) FROM spans").fetchone()[0]
    assert count >= 7  # a turn: co.turn, the run, 3 model requests, 2 tool calls
    assert (
        row["detail"] == f"{db} ({count} spans) + OTLP http://collector:4318/v1/traces; content off"
    )
    off = _traces_status({"CO_TELEMETRY": "false"})
    assert off["state"] == "off"
