"""Co's capabilities run as one group in pydantic-ai's order, and no hook is lost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from co_core.agent.assembly.group import CapabilityGroup
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


@dataclass
class PerRun(AbstractCapability[Any]):
    """Counts the requests of one run: state of its own for each run (``for_run``)."""

    runs: list[PerRun] = field(default_factory=list)
    requests: int = 0

    async def for_run(self, ctx: RunContext[Any]) -> PerRun:
        fresh = PerRun(self.runs)
        self.runs.append(fresh)
        return fresh

    async def before_model_request(self, ctx: RunContext[Any], request_context: Any) -> Any:
        self.requests += 1
        return request_context


def test_each_run_gets_its_parts_own_copy() -> None:
    counting = PerRun()
    agent = Agent(
        scripted_model(lambda messages, info: ModelResponse(parts=[TextPart("hi")])),
        capabilities=[CapabilityGroup([counting, Recorder("plain")])],
    )
    agent.run_sync("one")
    agent.run_sync("two")
    assert [run.requests for run in counting.runs] == [1, 1]  # not 1, 2: nothing carried over
    assert counting.requests == 0  # the agent's own instance is never used by a run


def test_a_hook_inherited_from_a_base_class_is_seen_too() -> None:
    @dataclass
    class Streams(AbstractCapability[Any]):
        async def on_event(self, ctx: RunContext[Any], *, event: Any) -> None:
            return None

    @dataclass
    class Derived(Streams):
        pass

    with pytest.raises(TypeError, match="on_event"):
        CapabilityGroup([Derived()])


def test_a_runs_copy_of_the_group_does_not_inspect_its_parts_again() -> None:
    """A part with a ``for_run`` copy (pydantic-ai's tracing) makes a copy of the group for
    every run: which hooks each part's class has is worked out once, not per run."""
    from co_core.agent.assembly import group

    agent = Agent(
        scripted_model(lambda messages, info: ModelResponse(parts=[TextPart("hi")])),
        capabilities=[CapabilityGroup([PerRun(), Recorder("plain")])],
    )
    agent.run_sync("one")
    looked = group._hooks_of.cache_info().misses
    for _ in range(3):
        agent.run_sync("again")
    assert group._hooks_of.cache_info().misses == looked
