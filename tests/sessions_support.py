"""Shared set-up for the session tests: a real pydantic-ai Agent, a scripted model, a real tool.

The scripted model answers a prompt that starts with ``read NAME`` by calling the
``read_note`` tool (which reads a real file), then answers with what it read; any other
prompt is echoed back. Every request it receives is kept in ``Script.requests``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel


def read_note(ctx: RunContext[Path], name: str) -> str:
    """Read a note from the notes folder."""
    return (ctx.deps / name).read_text(encoding="utf-8")


@dataclass
class Script:
    """The scripted model; ``requests`` holds the messages of every request it got."""

    requests: list[list[ModelMessage]] = field(default_factory=list)
    calls: int = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        last = messages[-1]
        prompts = [p.content for p in last.parts if isinstance(p, UserPromptPart)]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if returns and not prompts:
            return ModelResponse(parts=[TextPart(f"The note says: {returns[-1].content}")])
        prompt = prompts[-1]
        if isinstance(prompt, str) and prompt.startswith("read "):
            self.calls += 1
            name = prompt.split()[1]
            return ModelResponse(
                parts=[ToolCallPart("read_note", {"name": name}, tool_call_id=f"call-{self.calls}")]
            )
        return ModelResponse(parts=[TextPart(f"echo: {prompt}")])


def make_agent(script: Script, capabilities: list[Any] | None = None) -> Agent[Path, str]:
    return Agent(
        FunctionModel(script),
        deps_type=Path,
        instructions="You are Co, a test assistant.",
        tools=[Tool(read_note)],
        capabilities=capabilities or [],
    )


def run(agent: Agent[Path, str], prompt: str, notes: Path, history: list[Any]) -> Any:
    return asyncio.run(agent.run(prompt, deps=notes, message_history=history))


def all_text(messages: list[ModelMessage]) -> str:
    """Every piece of text the model was shown, for 'did it see X' assertions."""
    out = []
    for message in messages:
        for part in message.parts:
            content = getattr(part, "content", None)
            if isinstance(content, str):
                out.append(content)
            if isinstance(part, ToolCallPart):
                out.append(str(part.args))
    return "\n".join(out)


def turn(prompt: str, answer: str) -> list[ModelMessage]:
    """A hand-built text-only turn (for store tests that need no model)."""
    return [ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=[TextPart(answer)])]


def tool_turn(prompt: str, call_id: str, output: str) -> list[ModelMessage]:
    """A hand-built turn with one tool call and its return."""
    return [
        ModelRequest(parts=[UserPromptPart(prompt)]),
        ModelResponse(parts=[ToolCallPart("read_note", {"name": "x"}, tool_call_id=call_id)]),
        ModelRequest(parts=[ToolReturnPart("read_note", output, tool_call_id=call_id)]),
        ModelResponse(parts=[TextPart(f"done {call_id}")]),
    ]


def searched_turns(turns: int = 250) -> list[ModelMessage]:
    """A long saved session: prompt, search call, ~1 KB of its output, answer a turn
    (250 turns: 1,000 messages, as bench/sessions.py builds)."""
    messages: list[ModelMessage] = []
    line = "src/module.py:12: def handler(event): return event.payload\n"
    for n in range(turns):
        messages += [
            ModelRequest(parts=[UserPromptPart(f"question {n}: where is the handler defined?")]),
            ModelResponse(parts=[ToolCallPart("search", {"query": f"handler {n}"}, f"call-{n}")]),
            ModelRequest(
                parts=[
                    ToolReturnPart("search", f"result {n}: " + line * 16, tool_call_id=f"call-{n}")
                ]
            ),
            ModelResponse(parts=[TextPart(f"It is in src/module.py line 12 (turn {n}).")]),
        ]
    return messages
