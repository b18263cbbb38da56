"""MCP tools inside Co's real agent (co_core.agent.assembly.build / co_core.agent.conversation, issue 3).

Skipped until the agent lands in main. Then it checks the wiring docs/mcp.md asks of
``build_agent``: ``toolsets=mcp_toolsets(settings, specs=specs, warn=warn)``, so MCP tools
reach the model and go through the same approval gate as plugin tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import Asking, session_with, turn
from mcp_support import sdk_server
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart


def test_mcp_tools_in_the_real_agent_are_gated(
    co_dirs: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("CO_LOAD_PLUGINS", "")
    notes = tmp_path / "notes.txt"
    seen: list[str] = []

    def script(messages: list, info: Any) -> ModelResponse:
        seen[:] = [t.name for t in info.function_tools]
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(f"{last.outcome}: {last.content}")])
        return ModelResponse(parts=[ToolCallPart("t_write_note", {"text": "hi"})])

    settings = {"mcp_servers": {"t": sdk_server(env={"NOTE_FILE": str(notes)})}}
    first = turn(session_with(script, settings), "go")
    assert "t_write_note" in seen
    assert not notes.exists() and first.output.startswith("denied"), first.output
    asked = []

    def approver(record: Any) -> tuple[bool, str]:
        call = record.call
        asked.append((call.tool, call.plugin, call.permission_key, record.decision.effect))
        return True, ""

    second = turn(session_with(script, settings, frontend=Asking(approver)), "go")
    assert notes.read_text() == "hi\n", second.output
    assert asked == [("t_write_note", "mcp:t", "mcp:t:write_note", "ask")]
