"""Requests to MCP servers are client spans as OpenTelemetry's MCP conventions have them,
under the tool call they serve, and the server receives their trace context. Real MCP
servers (tests/mcp_test_server.py) over stdio and streamable HTTP, Co's real conversation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import span_rows
from mcp_support import SERVER, Chat, app_with, http_server, sdk_server

ALLOW = [{"match": "mcp:**", "effect": "allow"}]


def rows_of(co_dirs: Path) -> list[dict[str, Any]]:
    return span_rows(co_dirs.parent / "co-data" / "traces.db")


def run_calls(app: Any, workspace: Path, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    """One turn of ``co chat`` (traced as it is by default); every span written after."""
    chat = Chat(app, workspace)
    try:
        return chat.turn(calls)
    finally:
        chat.close()


@pytest.mark.parametrize("content", [False, True])
def test_a_call_is_a_client_span_under_its_tool_call_and_reaches_the_server(
    co_dirs: Path, tmp_path: Path, content: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CO_TRACE_CONTENT", "1" if content else "0")
    server = sdk_server(args=[SERVER, "--trace"])
    app = app_with({"t": server}, cwd=tmp_path, rules=ALLOW)
    result = run_calls(app, tmp_path, [("t_echo", {"text": "MARK-x"}), ("t_trace_parent", {})])
    assert [c.status for c in result.calls] == ["ok", "ok"]
    rows = rows_of(co_dirs)
    by_id = {r["id"]: r for r in rows}
    echo = next(r for r in rows if r["name"] == "tools/call echo")
    attrs = echo["attrs"]
    assert echo["kind"] == "CLIENT"
    assert attrs["mcp.method.name"] == "tools/call" and attrs["gen_ai.tool.name"] == "echo"
    assert attrs["network.transport"] == "pipe" and attrs["co.server"] == "t"
    assert attrs["mcp.protocol.version"]  # as negotiated at initialize
    assert "error.type" not in attrs and echo["status"] == "UNSET"
    assert by_id[echo["parent_id"]]["name"] == "execute_tool t_echo"  # the call it serves
    # the MCP span is the wire, not a second tool call: the views count execute_tool
    assert "gen_ai.operation.name" not in attrs
    assert ("gen_ai.tool.call.arguments" in attrs) is content
    assert ("MARK-x" in json.dumps(rows)) is content

    # the server got the call's own span as its parent: one trace from Co to the server
    asked = next(r for r in rows if r["name"] == "tools/call trace_parent")
    version, trace_id, parent, flags = str(result.calls[1].result).split("-")
    assert (trace_id, parent) == (asked["trace_id"], asked["id"])
    assert int(flags, 16) & 1  # sampled

    start = next(r for r in rows if r["name"] == "co.mcp.start")
    (initialize,) = [r for r in rows if r["name"] == "initialize"]
    listed = [r for r in rows if r["name"] == "tools/list"]
    assert initialize["parent_id"] == start["id"] and initialize["kind"] == "CLIENT"
    assert listed[0]["parent_id"] == start["id"] and listed[0]["attrs"]["co.tools"] == 6


def test_a_call_that_times_out_says_so_on_its_span(co_dirs: Path, tmp_path: Path) -> None:
    app = app_with({"t": sdk_server(call_timeout=1)}, cwd=tmp_path, rules=ALLOW)
    result = run_calls(app, tmp_path, [("t_hang", {})])
    assert [c.status for c in result.calls] == ["timed out"]
    (hung,) = [r for r in rows_of(co_dirs) if r["name"] == "tools/call hang"]
    assert hung["status"] == "ERROR" and hung["attrs"]["error.type"] == "timeout"


@pytest.fixture
def web() -> Iterator[str]:
    with http_server("tok-123") as url:
        yield url


def test_a_call_over_http_names_the_server_it_went_to(
    co_dirs: Path, tmp_path: Path, web: str
) -> None:
    server = {"url": web, "headers": {"Authorization": "Bearer tok-123"}}
    app = app_with({"web": server}, cwd=tmp_path, rules=ALLOW)
    result = run_calls(app, tmp_path, [("web_echo", {"text": "over http"})])
    assert [c.result for c in result.calls] == ["echo: over http"]
    (echo,) = [r for r in rows_of(co_dirs) if r["name"] == "tools/call echo"]
    attrs = echo["attrs"]
    port = int(web.rsplit(":", 1)[1].split("/")[0])
    assert (attrs["network.transport"], attrs["network.protocol.name"]) == ("tcp", "http")
    assert (attrs["server.address"], attrs["server.port"]) == ("127.0.0.1", port)
    assert attrs["mcp.protocol.version"]  # (no mcp.session.id: this server keeps no session)
    assert "tok-123" not in json.dumps(attrs)
