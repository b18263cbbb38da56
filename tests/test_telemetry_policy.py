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
    assert lookup["co.policy.read_only"] is False and "co.policy.row" not in lookup

    shown = run_co("traces", "-n", "1", env={"COLUMNS": "160"})
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    looked = next(x for x in lines if "execute_tool lookup" in x)
    assert "ok" in looked and "policy: allow (default)" in looked
    held = next(x for x in lines if "execute_tool write_note" in x)
    assert "denied" in held and "policy: ask (default)" in held
    assert "answer: no (nobody)" in held  # no one at a terminal to ask

    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    canned = {r["tool"]: dict(r) for r in conn.execute(TOOL_CALLS)}
    conn.close()
    assert (canned["lookup"]["outcome"], canned["lookup"]["policy"]) == ("ok", "allow")
    written = canned["write_note"]
    assert (written["outcome"], written["policy"], written["answer"]) == ("denied", "ask", "no")
    assert written["answered_by"] == "nobody"


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


# -- how an approval ended, in traces -------------------------------------------------------


def _approval_turn(
    co_dirs: Path,
    approvals: Any,
    *,
    content: bool,
    names: tuple[str, ...] = ("a.md", "b.md", "c.md"),
) -> list[dict[str, Any]]:
    """Three writes, one per step; the Tool calls view's rows, oldest first."""
    from co_core.testing import Approvals, run_turn, traced

    def script(messages: list[Any], info: Any) -> ModelResponse:
        done = sum(1 for m in messages if m.kind == "response")
        if done < 3:
            name = names[done]
            return ModelResponse(parts=[ToolCallPart("write_note", {"name": name, "text": "x"})])
        return ModelResponse(parts=[TextPart("done")])

    app = make_app({"telemetry": {"include_content": content}}, cwd=co_dirs.parent)
    assert isinstance(approvals, Approvals)
    with traced(app.settings, content=content):
        run_turn(app, "write three notes", script, approvals=approvals)
    conn = sqlite3.connect(co_dirs.parent / "co-data" / "traces.db")
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute(TOOL_CALLS)]
    conn.close()
    return list(reversed(rows))


@pytest.mark.parametrize("content", [False, True], ids=["content-off", "content-on"])
def test_the_tool_calls_view_shows_each_answer_and_the_approved_runs_decision(
    testplug: Path, content: bool
) -> None:
    from co_core.testing import Approvals

    answers = iter([True, False, True])
    approvals = Approvals(lambda call: next(answers), reason="not that one", scope="once")
    rows = _approval_turn(testplug, approvals, content=content)
    shown = [(r["outcome"], r["answer"], r["answered_by"], r["policy"]) for r in rows]
    assert shown == [
        ("approved", "yes once", "user", "ask"),  # a.md: held, then ...
        ("ok", "yes once", "user", "allow"),  # ... its run, with the decision that let it run
        ("denied", "no", "user", "ask"),  # b.md: the user said no
        ("approved", "yes once", "user", "ask"),
        ("ok", "yes once", "user", "allow"),
    ]
    assert rows[1]["policy_source"] == "user"
    reason = rows[2]["error"]
    assert reason == ("not that one" if content else None)  # the user's words are content

    shown_text = run_co("traces", "-n", "1", env={"COLUMNS": "200"}).stdout
    denied = [x for x in shown_text.splitlines() if "execute_tool write_note" in x][2]
    assert "denied" in denied and "answer: no (user)" in denied


def test_a_yes_for_the_session_is_recorded_as_the_answer_to_the_later_calls(
    testplug: Path,
) -> None:
    from co_core.testing import Approvals

    names = ("a.md", "a.md", "b.md")
    rows = _approval_turn(testplug, Approvals(True, scope="session"), content=False, names=names)
    shown = [(r["outcome"], r["answer"], r["policy"], r["policy_source"]) for r in rows]
    assert shown == [
        ("approved", "yes session", "ask", "default"),  # a.md asked once ...
        ("ok", "yes session", "allow", "user"),
        ("ok", None, "allow", "session"),  # ... and the second a.md allowed by that grant
        ("approved", "yes session", "ask", "default"),  # b.md is another file: asked
        ("ok", "yes session", "allow", "user"),
    ]
