"""A real Co turn records each policy decision on its tool call's span (one span per call),
and ``co traces`` and the Datasette tool-calls query show it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers import session_with, span_rows, turn
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

from co_core import telemetry
from co_core.telemetry.datasette_meta import TOOL_CALLS
from co_core.testing import make_app, run_co

pytestmark = pytest.mark.usefixtures("testplug")


def _script(messages: list[Any], info: Any) -> ModelResponse:
    if not any(m.kind == "response" for m in messages):
        return ModelResponse(
            parts=[
                ToolCallPart("lookup", {"query": "re"}),  # read: allowed by default
                ToolCallPart("write_note", {"name": "a.md", "text": "x"}),  # write: asks
            ]
        )
    return ModelResponse(parts=[TextPart("done")])


def test_decisions_are_attributes_of_the_tool_spans(testplug: Path) -> None:
    session = session_with(_script)
    try:
        result = turn(session, "look it up and write it down")
        telemetry.flush()
    finally:
        session.close()
    assert [(c.tool, c.status) for c in result.calls] == [
        ("lookup", "ok"),
        ("write_note", "denied"),
    ]
    db = testplug.parent / "co-data" / "traces.db"
    rows = span_rows(db)
    assert not [r for r in rows if r["name"] == "co.policy.decision"], "one span per call"
    tools = {
        r["attrs"]["gen_ai.tool.name"]: r for r in rows if r["name"].startswith("execute_tool")
    }
    lookup, write = tools["lookup"]["attrs"], tools["write_note"]["attrs"]
    assert lookup["co.policy.effect"] == "allow" and lookup["co.policy.source"] == "default"
    assert lookup["co.plugin"] == "testplug" and write["co.policy.effect"] == "ask"
    assert "co.policy.permission" not in write  # it holds the path: content, off by default

    shown = run_co("traces", "-n", "1", env={"COLUMNS": "160"})
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    looked = next(x for x in lines if "execute_tool lookup" in x)
    assert "ok" in looked and "policy: allow (default)" in looked
    held = next(x for x in lines if "execute_tool write_note" in x)
    assert "held for approval" in held and "policy: ask (default)" in held

    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    canned = {r["tool"]: dict(r) for r in conn.execute(TOOL_CALLS)}
    conn.close()
    assert (canned["lookup"]["outcome"], canned["lookup"]["policy"]) == ("ok", "allow")
    assert (canned["write_note"]["outcome"], canned["write_note"]["policy"]) == (
        "held for approval",
        "ask",
    )


def test_a_tool_can_annotate_its_own_span(co_dirs: Path) -> None:
    def script(messages: list[Any], info: Any) -> ModelResponse:
        if not any(m.kind == "response" for m in messages):
            return ModelResponse(parts=[ToolCallPart("cached", {"key": "k"})])
        return ModelResponse(parts=[TextPart("done")])

    def build() -> Agent:
        agent = Agent(
            FunctionModel(script, model_name="scripted"),
            name="co",
            capabilities=telemetry.capabilities(),
        )

        @agent.tool
        def cached(ctx: RunContext[None], key: str) -> str:
            """Answers from a cache and says so on its span."""
            traced = telemetry.tool_span(ctx.tool_call_id)
            assert telemetry.tool_span("another-call") is None
            if traced is not None:
                traced.set(cache_hit=True)
            return "v"

        return agent

    try:
        telemetry.setup_tracing(make_app({}).settings)
        build().run_sync("go")
        telemetry.flush()
    finally:
        telemetry.shutdown_tracing()
    (tool,) = [
        r
        for r in span_rows(co_dirs.parent / "co-data" / "traces.db")
        if r["name"] == "execute_tool cached"
    ]
    assert tool["attrs"]["co.cache_hit"] is True
    assert telemetry.tool_span("any") is None  # tracing off: nothing to annotate
