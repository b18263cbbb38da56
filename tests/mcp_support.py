"""Shared set-up for the MCP tests: real MCP servers, a real engine, a scripted model.

``run_turn`` is a minimal chat loop in the shape of tests/test_policy_agent_fit.py: the
policy engine decides each MCP call through pydantic-ai's approval mechanism, a scripted
"user" answers prompts, and denials go back to the model. The real chat loop wires the same
engine calls (see docs/mcp.md).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, RunContext, ToolDenied
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_core.mcp.toolsets import mcp_toolsets
from co_core.policy import PolicyEngine
from co_core.testing import make_app

SERVER = str(Path(__file__).with_name("mcp_test_server.py"))


def sdk_server(**options: Any) -> dict[str, Any]:
    """The settings entry for the SDK-built test server."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [SERVER]}
    entry.update(options)
    return entry


def time_server() -> dict[str, Any]:
    """The published reference server ``mcp-server-time`` (installed from PyPI)."""
    return {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def app_with(
    servers: dict[str, Any], *, cwd: Path, rules: list[dict] | None = None, **mcp: Any
) -> Any:
    settings: dict[str, Any] = {"mcp_servers": servers}
    if rules is not None:
        settings["policy"] = {"rules": rules}
    if mcp:
        settings["mcp"] = mcp
    saved = os.environ.get("CO_LOAD_PLUGINS")
    os.environ["CO_LOAD_PLUGINS"] = ""  # only MCP tools in these turns
    try:
        return make_app(settings, cwd=cwd)
    finally:
        if saved is None:
            os.environ.pop("CO_LOAD_PLUGINS", None)
        else:
            os.environ["CO_LOAD_PLUGINS"] = saved


@dataclass
class Turn:
    output: str
    tools_seen: list[str]
    results: list[str]  # what the model got back, in order
    warnings: list[str]
    decisions: dict[str, Any] = field(default_factory=dict)


def run_turn(
    app: Any,
    workspace: Path,
    calls: list[tuple[str, dict[str, Any]]],
    *,
    headless: bool = True,
    answer: Callable[[Any], bool] | None = None,
) -> Turn:
    """The model makes ``calls`` one after another, then says what it got back."""
    engine = PolicyEngine.from_app(app, workspace=workspace, session_id="mcp", headless=headless)
    warnings: list[str] = []
    agent_specs: dict[str, Any] = {}  # an agent's own name -> ToolSpec map, kept in step
    toolsets = mcp_toolsets(
        app.settings, specs=[engine.specs, agent_specs], workspace=workspace, warn=warnings.append
    )
    decisions: dict[str, Any] = {}

    def needs_approval(ctx: RunContext[Any], tool_def: Any, args: dict[str, Any]) -> bool:
        decision = engine.decide(engine.make_call(tool_def.name, args), call_id=ctx.tool_call_id)
        decisions[ctx.tool_call_id] = decision
        return not decision.allowed

    gated = [t.approval_required(needs_approval) for t in toolsets]
    seen: list[str] = []
    results: list[str] = []

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen[:] = sorted(t.name for t in info.function_tools)
        back = [
            p
            for m in messages
            for p in getattr(m, "parts", [])
            if isinstance(p, ToolReturnPart | RetryPromptPart)
        ]
        results[:] = [str(p.content) for p in back]
        if len(back) < len(calls):
            name, args = calls[len(back)]
            return ModelResponse(parts=[ToolCallPart(name, args, f"call{len(back)}")])
        return ModelResponse(parts=[TextPart("results: " + " | ".join(results))])

    agent = Agent(FunctionModel(script), output_type=[str, DeferredToolRequests], toolsets=gated)

    async def main() -> str:
        async with agent:  # the servers stay up for the whole turn
            result = await agent.run("go")
            while isinstance(result.output, DeferredToolRequests):
                answers = DeferredToolResults()
                for pending in result.output.approvals:
                    decision = decisions[pending.tool_call_id]
                    if decision.needs_approval and answer is not None:
                        yes = answer(decision)
                        engine.record_answer(decision, yes, call_id=pending.tool_call_id)
                        answers.approvals[pending.tool_call_id] = (
                            True if yes else ToolDenied("the user said no")
                        )
                    else:
                        answers.approvals[pending.tool_call_id] = ToolDenied(decision.reason)
                result = await agent.run(
                    message_history=result.all_messages(), deferred_tool_results=answers
                )
            return result.output

    import anyio

    output = anyio.run(main)
    assert {n: s for n, s in engine.specs.items() if s.plugin.startswith("mcp:")} == agent_specs
    return Turn(output, list(seen), list(results), warnings, decisions)


def audit_lines(data_dir: Path, session: str = "mcp") -> list[dict[str, Any]]:
    path = data_dir / "audit" / f"{session}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
