"""A full turn with a scripted model and the real tools: search, read, answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from obsidian_vaults import write
from pydantic_ai import Agent, Tool
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_core import CoDeps
from co_core.testing import make_app


def _field(content: Any, name: str) -> Any:
    return getattr(content, name) if hasattr(content, name) else content[name]


def obsidian_agent(script: Any, vault: Path | None) -> tuple[Agent, CoDeps]:
    """The agent with co-obsidian's tools loaded the way Co loads them: from the hook."""
    app = make_app({"obsidian": {"vault_path": str(vault)} if vault else {}})
    specs = [s for s in app.host.tools() if s.plugin == "obsidian"]
    tools = [Tool(spec.load(), name=spec.name) for spec in specs]
    agent = Agent(FunctionModel(script), deps_type=CoDeps, tools=tools)
    return agent, app.make_deps()


def test_search_read_answer_with_display_passthrough(vault: Path, co_dirs: Path) -> None:
    write(
        vault,
        "travel/Zanzibar trip.md",
        "---\ntags: [travel]\n---\n# Ferry\nThe ferry to Zanzibar leaves at 07:30 from pier 4.",
    )
    write(vault, "travel/Paris.md", "Train to Paris, no ferry.")
    seen: dict[str, Any] = {}

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        returned = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if not returned:
            assert {"search_notes", "read_note", "list_notes"} <= {
                t.name for t in info.function_tools
            }
            return ModelResponse(parts=[ToolCallPart("search_notes", {"query": "ferry zanzibar"})])
        part = returned[0]
        if part.tool_name == "search_notes":
            seen["display"] = _field(part.content, "display")
            seen["count"] = _field(part.content, "count")
            path = _field(part.content, "data")["paths"][0]
            return ModelResponse(parts=[ToolCallPart("read_note", {"name": path})])
        note = part.content
        time = note.split("leaves at ")[1].split(" ")[0]
        return ModelResponse(parts=[TextPart(f"{seen['display']}\n\nThe ferry leaves at {time}.")])

    agent, deps = obsidian_agent(script, vault)
    try:
        result = agent.run_sync("When does the Zanzibar ferry leave?", deps=deps)
    finally:
        deps.close()
    assert seen["count"] == 1
    assert "1. travel/Zanzibar trip.md" in seen["display"]
    assert result.output.startswith(seen["display"])
    assert result.output.endswith("The ferry leaves at 07:30.")


def test_unconfigured_vault_reaches_the_model_as_a_retry(co_dirs: Path) -> None:
    retries: list[str] = []

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        parts = messages[-1].parts
        # pydantic-ai 2.x reports a ModelRetry as a tool return with outcome "retried"
        retry = [
            p
            for p in parts
            if isinstance(p, RetryPromptPart)
            or (isinstance(p, ToolReturnPart) and p.outcome != "success")
        ]
        if retry:
            retries.append(str(retry[0].content))
            return ModelResponse(parts=[TextPart("Please configure your vault.")])
        return ModelResponse(parts=[ToolCallPart("search_notes", {"query": "x"})])

    agent, deps = obsidian_agent(script, None)
    result = agent.run_sync("search my notes", deps=deps)
    assert result.output == "Please configure your vault."
    assert "co config set obsidian.vault_path" in retries[0]
