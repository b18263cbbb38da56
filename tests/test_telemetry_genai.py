"""Model spans as OpenTelemetry's GenAI conventions have them, against a real
OpenAI-compatible HTTP server: ``chat`` spans are CLIENT spans with what the server
answered; a run's span carries its token totals, counted once in every view."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import session_with, span_rows, turn
from openai_server import USAGE, Server
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from co_core import telemetry
from co_core.telemetry import view

pytestmark = pytest.mark.usefixtures("testplug")

CO = str(Path(sys.executable).parent / "co")
SECRET = "sk-proj-PLANTEDsecretVALUE0123456789abcdef"


def tool_then_text(body: dict[str, Any]) -> dict[str, Any]:
    if body["messages"][-1]["role"] == "tool":
        return {"text": "sum is " + body["messages"][-1]["content"]}
    return {"tool": "add_numbers", "args": {"a": 2, "b": 3}}


def no_streams_with_tools(body: dict[str, Any]) -> dict[str, Any]:
    """A server that cannot stream with tools (llama.cpp's old builds): Co asks again whole."""
    if body.get("stream") and body.get("tools"):
        message = "Automatic streaming tool choice is not supported"
        return {"status": 500, "body": {"error": {"message": message}}}
    return tool_then_text(body)


def ask(server: Server, *args: str, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [CO, "ask", "-m", "openai-compatible:tiny", "--base-url", server.base_url, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def traces(co_dirs: Path) -> list[dict[str, Any]]:
    return span_rows(co_dirs.parent / "co-data" / "traces.db")


@pytest.mark.parametrize("script", [tool_then_text, no_streams_with_tools])
def test_chat_spans_are_client_spans_with_what_the_server_answered(
    co_dirs: Path, script: Any
) -> None:
    with Server(script) as server:
        result = ask(server, "add 2 and 3")
        port = server.httpd.server_address[1]
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "sum is 5"
    rows = traces(co_dirs)
    answered = [r for r in rows if r["name"] == "chat tiny" and r["status"] != "ERROR"]
    assert len(answered) == 2  # the tool call, then the answer
    for chat in answered:
        attrs = chat["attrs"]
        assert chat["kind"] == "CLIENT"
        assert attrs["gen_ai.operation.name"] == "chat"
        assert attrs["gen_ai.request.model"] == attrs["gen_ai.response.model"] == "tiny"
        assert attrs["gen_ai.provider.name"] == "openai-compatible"
        assert (attrs["server.address"], attrs["server.port"]) == ("127.0.0.1", port)
        assert attrs["gen_ai.usage.input_tokens"] == USAGE["prompt_tokens"]
        assert attrs["gen_ai.usage.output_tokens"] == USAGE["completion_tokens"]
        assert attrs["co.cost_usd"] == 0  # a server on this machine costs nothing
    assert [c["attrs"]["gen_ai.response.finish_reasons"] for c in answered] == [
        ["tool_call"],
        ["stop"],
    ]
    ids = [c["attrs"]["gen_ai.response.id"] for c in answered]
    assert len(set(ids)) == 2 and all(i.startswith("chatcmpl-") for i in ids)

    (run,) = [r for r in rows if r["name"] == "invoke_agent co"]
    assert run["attrs"]["gen_ai.usage.input_tokens"] == 2 * USAGE["prompt_tokens"]
    assert run["attrs"]["gen_ai.usage.output_tokens"] == 2 * USAGE["completion_tokens"]
    assert all(c["parent_id"] == run["id"] for c in answered)
    (tool,) = [r for r in rows if r["name"] == "execute_tool add_numbers"]
    assert tool["attrs"]["co.policy.effect"] == "allow"  # Co's attributes on pydantic-ai's span


@pytest.mark.parametrize("content", [False, True])
def test_what_a_request_sent_is_recorded_only_with_content(co_dirs: Path, content: bool) -> None:
    with Server(tool_then_text) as server:
        flags = ["--trace-content"] if content else []
        result = ask(server, *flags, f"add 2 and 3, my key is {SECRET}")
    assert result.returncode == 0, result.stderr
    rows = traces(co_dirs)
    chats = [r for r in rows if r["name"] == "chat tiny"]
    (run,) = [r for r in rows if r["name"] == "invoke_agent co"]
    for chat in chats:
        attrs = chat["attrs"]
        assert ("gen_ai.input.messages" in attrs) is content
        assert ("gen_ai.output.messages" in attrs) is content
        assert ("gen_ai.tool.definitions" in attrs) is content  # opt-in in the conventions
        assert not [k for k in attrs if k.startswith("logfire.")]  # Logfire's, not ours
    assert ("pydantic_ai.all_messages" in run["attrs"]) is content
    everything = json.dumps(rows)
    assert ("add 2 and 3" in everything) is content
    assert SECRET not in everything  # masked, content or not
    if content:
        sent = json.loads(chats[0]["attrs"]["gen_ai.input.messages"])
        assert "[REDACTED]" in json.dumps(sent)
        tools = json.loads(chats[0]["attrs"]["gen_ai.tool.definitions"])
        assert "add_numbers" in {t["name"] for t in tools}


def _script(messages: list[Any], info: Any) -> ModelResponse:
    asked = sum(1 for m in messages if m.kind == "response")
    if asked % 2 == 0:
        return ModelResponse(parts=[ToolCallPart("lookup", {"query": "red"})])
    return ModelResponse(parts=[TextPart("found it")])


def test_each_runs_totals_are_its_own_and_views_count_every_token_once(co_dirs: Path) -> None:
    chat = session_with(_script)
    try:
        for prompt in ("look up red", "and again"):
            turn(chat, prompt)
        telemetry.flush()
    finally:
        chat.close()
    rows = traces(co_dirs)
    by_parent: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_parent.setdefault(r["parent_id"] or "", []).append(r)
    runs = [r for r in rows if r["name"] == "invoke_agent co"]
    assert len(runs) == 2
    for run in runs:
        requests = [r for r in by_parent[run["id"]] if r["name"].startswith("chat ")]
        assert len(requests) == 2
        for key in ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"):
            assert run["attrs"][key] == sum(r["attrs"][key] for r in requests) > 0

    db = co_dirs.parent / "co-data" / "traces.db"
    for root in view.last_turns(db, 2):
        requests = [r for r in rows if r["trace_id"] == root.row["trace_id"]]
        inp = sum(
            r["attrs"].get("gen_ai.usage.input_tokens", 0)
            for r in requests
            if r["kind"] == "CLIENT"
        )
        out = sum(
            r["attrs"].get("gen_ai.usage.output_tokens", 0)
            for r in requests
            if r["kind"] == "CLIENT"
        )
        assert view.tokens(root) == (inp, out)  # `co traces`: not the run's totals again
        assert f"{inp:,} in / {out:,} out tokens" in view.label(root, root=True)
