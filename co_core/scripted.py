"""Scripted models for tests and benchmarks: one function drives both plain and streamed runs.

``scripted_model(script)`` wraps ``script(messages, info) -> ModelResponse`` into a
pydantic-ai ``FunctionModel`` that also streams (text in small chunks, tool calls whole),
so the real agent, the REPL's streaming and real tools can run against a script.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

Script = Callable[[list[ModelMessage], AgentInfo], Any]


def scripted_model(
    script: Script, *, chunk: int = 8, delay: float = 0.0, name: str = "scripted"
) -> FunctionModel:
    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        result = script(messages, info)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        response = await respond(messages, info)
        for index, part in enumerate(response.parts):
            if isinstance(part, TextPart):
                for start in range(0, len(part.content), chunk):
                    if delay:
                        await asyncio.sleep(delay)
                    yield part.content[start : start + chunk]
            elif isinstance(part, ToolCallPart):
                args = part.args if isinstance(part.args, str) else json.dumps(part.args or {})
                yield {index: DeltaToolCall(part.tool_name, args, tool_call_id=part.tool_call_id)}

    return FunctionModel(respond, stream_function=stream, model_name=name)


def last_user_text(messages: list[ModelMessage]) -> str:
    """The most recent user prompt in the history (what a script usually reacts to)."""
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""
