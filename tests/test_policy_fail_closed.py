"""Deps never let a policy-filtered read through by default: they carry the user's rules,
or refuse. Real co-obsidian tools and vault, a plugin's own pydantic-ai agent (not Co's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, Tool
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_core import CoDeps
from co_core.kernel.deps import NoPolicy, Resources
from co_core.testing import make_app, make_deps

SECRET = "the-private-word"
DENY = [{"match": "obsidian:read:Private/**", "effect": "deny"}]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "Private").mkdir(parents=True)
    (root / "Inbox").mkdir()
    (root / "Private" / "Diary.md").write_text(f"shared word, {SECRET}\n")
    (root / "Inbox" / "todo.md").write_text("shared word, nothing private\n")
    return root


def own_agent_turn(deps: CoDeps, *calls: tuple[str, dict[str, Any]]) -> str:
    """A plugin's own agent over co-obsidian's tools: runs ``calls``, answers with results."""
    app_tools = [s for s in make_app().host.tools() if s.plugin == "obsidian"]
    tools = [Tool(spec.load(), name=spec.name) for spec in app_tools]

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        step = sum(1 for m in messages if isinstance(m, ModelResponse))
        if step < len(calls):
            name, args = calls[step]
            return ModelResponse(parts=[ToolCallPart(name, args)])
        return ModelResponse(parts=[TextPart(repr(messages))])

    agent = Agent(FunctionModel(script), deps_type=CoDeps, tools=tools)
    try:
        return agent.run_sync("go", deps=deps).output
    finally:
        deps.close()


@pytest.mark.parametrize(
    "call",
    [("search_notes", {"query": "shared word"}), ("list_notes", {})],
    ids=["search", "listing"],
)
@pytest.mark.parametrize("made_by", ["app.make_deps", "testing.make_deps"])
def test_deps_made_outside_a_chat_keep_the_users_rules(
    co_dirs: Path, vault: Path, tmp_path: Path, call: tuple[str, dict[str, Any]], made_by: str
) -> None:
    settings = {"obsidian": {"vault_path": str(vault)}, "policy": {"rules": DENY}}
    if made_by == "app.make_deps":
        deps = make_app(settings, cwd=tmp_path).make_deps()
    else:
        deps = make_deps(settings, workspace=tmp_path)
    output = own_agent_turn(deps, call)
    assert "Inbox/todo.md" in output
    assert "Private" not in output and SECRET not in output


def test_deps_with_no_policy_at_all_refuse_the_read_with_a_reason(
    co_dirs: Path, vault: Path, tmp_path: Path
) -> None:
    app = make_app({"obsidian": {"vault_path": str(vault)}}, cwd=tmp_path)
    factories = {  # every resource but the policy: deps a plugin might put together itself
        name: entry.value
        for name, entry in app.host.named("register_deps", "resource").items()
        if name != "core.policy"
    }
    deps = CoDeps(app.settings, Resources(factories, app.settings), tmp_path)
    with pytest.raises(NoPolicy, match="'obsidian:read:Inbox/todo.md' may be read"):
        deps.allows("obsidian:read:Inbox/todo.md")
    with pytest.raises(NoPolicy):  # the search fails rather than let anything through
        own_agent_turn(deps, ("search_notes", {"query": "shared word"}))
    import gc

    gc.collect()  # co-obsidian's ranking generator, left open by the failed search, ends here
