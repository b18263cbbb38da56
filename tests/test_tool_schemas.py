"""Tool descriptions stay short: every token of them is paid for on every request.

The budget, stated in docs/chat.md: the four bundled plugins' tools and Co's own together
take at most 2,650 tokens as JSON schemas (Co's estimate, about 4 characters a token) and
at most 950 as the signatures the ``local`` model reads; no single tool more than 160.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai import Tool
from pydantic_ai.tools import ToolDefinition

from co_core.agent.assembly.build import load_tools
from co_core.agent.local.constrained import signature
from co_core.agent.tools.toolbox import FIND_TOOLS, Toolbox, _compact
from co_core.sessions.tokens import text_tokens, tools_tokens
from co_core.testing import make_app

TOTAL_BUDGET = 2_650
SIGNATURE_BUDGET = 950
ONE_TOOL = 160
BUNDLED = {"shell", "obsidian", "google", "slack"}


@pytest.fixture
def tool_defs(co_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> list[ToolDefinition]:
    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)
    app = make_app()
    plugins = {spec.plugin for spec in app.host.tools()}
    assert BUNDLED <= plugins, "the four bundled plugins must be installed for this test"
    tools = load_tools(app.host, lambda message: None)
    toolbox = Toolbox(app.host, app.settings, {})
    tools.append(Tool(toolbox.find_tools, name=FIND_TOOLS))
    return [_compact(tool.tool_def) for tool in tools]


def test_all_tools_together_stay_within_the_stated_budget(tool_defs: list[ToolDefinition]) -> None:
    sizes = {d.name: tools_tokens([d]) for d in tool_defs}
    total = sum(sizes.values())
    assert total <= TOTAL_BUDGET, f"{total} tokens: {sorted(sizes.items(), key=lambda kv: -kv[1])}"
    too_big = {name: size for name, size in sizes.items() if size > ONE_TOOL}
    assert too_big == {}


def test_the_local_models_signatures_stay_within_the_stated_budget(
    tool_defs: list[ToolDefinition],
) -> None:
    total = sum(text_tokens(signature(d)) for d in tool_defs)
    assert total <= SIGNATURE_BUDGET


def test_every_tool_says_what_it_does(tool_defs: list[ToolDefinition]) -> None:
    for tool_def in tool_defs:
        description = (tool_def.description or "").strip()
        assert 10 <= len(description) <= 120, tool_def.name
