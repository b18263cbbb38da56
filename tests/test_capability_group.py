"""Co's capabilities run as one group in pydantic-ai's order, and no hook is lost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from co_core.agent.group import CapabilityGroup
from co_core.testing import scripted_model


@dataclass
class Recorder(AbstractCapability[Any]):
    name: str
    seen: list[str] = field(default_factory=list)

    async def before_model_request(self, ctx: RunContext[Any], request_context: Any) -> Any:
        self.seen.append(f"before {self.name}")
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: Any, response: ModelResponse
    ) -> ModelResponse:
        self.seen.append(f"after {self.name}")
        return response

    async def wrap_tool_execute(
        self, ctx: RunContext[Any], *, call: Any, tool_def: Any, args: Any, handler: Any
    ) -> Any:
        self.seen.append(f"enter {self.name}")
        result = await handler(args)
        self.seen.append(f"leave {self.name}")
        return f"{result}+{self.name}"


def test_parts_run_in_pydantic_ais_order() -> None:
    seen: list[str] = []
    first, second = Recorder("1", seen), Recorder("2", seen)

    def script(messages: list[Any], info: Any) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("echo", {"text": "x"})])
        return ModelResponse(parts=[TextPart(str(messages[-1].parts[0].content))])

    agent = Agent(scripted_model(script), capabilities=[CapabilityGroup([first, second])])

    @agent.tool_plain
    def echo(text: str) -> str:
        return text

    result = agent.run_sync("go")
    assert result.output == "x+2+1"  # the first part's wrap is the outermost
    assert seen[:6] == ["before 1", "before 2", "after 2", "after 1", "enter 1", "enter 2"]
    assert seen[6:8] == ["leave 2", "leave 1"]


def test_a_part_with_a_hook_the_group_does_not_pass_on_is_refused() -> None:
    @dataclass
    class Streams(AbstractCapability[Any]):
        async def on_event(self, ctx: RunContext[Any], *, event: Any) -> None:
            return None

    with pytest.raises(TypeError, match="on_event"):
        CapabilityGroup([Streams()])
