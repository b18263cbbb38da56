"""Scripted models for `co` subprocesses in tests: ``--model function:co_scripts:chat``."""

from __future__ import annotations

import json

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart

from co_core import ToolResult
from co_core.testing import last_user_text, scripted_model


def _turns(messages: list) -> int:
    from pydantic_ai.messages import UserPromptPart

    return sum(
        1
        for m in messages
        if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
    )


def script(messages: list, info: object) -> ModelResponse:
    last = messages[-1].parts[-1] if messages and messages[-1].parts else None
    if isinstance(last, ToolReturnPart):
        content = last.content
        shown = content.display if isinstance(content, ToolResult) else content
        return ModelResponse(parts=[TextPart(f"Tool said: {shown}")])
    text = last_user_text(messages)
    word, _, rest = text.partition(" ")
    if word == "slow":
        return ModelResponse(parts=[ToolCallPart("slow", {"seconds": float(rest or 30)})])
    if word == "colour":
        return ModelResponse(parts=[ToolCallPart("lookup", {"query": rest})])
    if word == "write":
        name, _, body = rest.partition(" ")
        return ModelResponse(parts=[ToolCallPart("write_note", {"name": name, "text": body})])
    if word == "write2":  # two writes in one response: "write2 a.txt b.txt"
        names = rest.split()
        return ModelResponse(
            parts=[ToolCallPart("write_note", {"name": n, "text": n.upper()}) for n in names]
        )
    if word == "osc":  # arguments carrying a terminal escape (set the window title)
        text = "harmless\x1b]0;pwned\x07\rrm -rf ~"
        return ModelResponse(parts=[ToolCallPart("write_note", {"name": "t.txt", "text": text})])
    if word == "resource":
        return ModelResponse(parts=[ToolCallPart("use_resource", {})])
    if word == "json":
        return ModelResponse(
            parts=[TextPart(json.dumps({"name": "lookup", "arguments": {"query": rest}}))]
        )
    return ModelResponse(
        parts=[
            TextPart(
                f"You said **{text}** (turn {_turns(messages)}). Streaming some more words now."
            )
        ]
    )


def chat() -> object:
    return scripted_model(script, chunk=6, delay=0.02)


def gated() -> object:
    """Streams "Before the gate.", waits until the file named in the prompt exists, then ends.

    Lets a test see text on screen while the model is provably still answering.
    """
    import asyncio
    from pathlib import Path

    from pydantic_ai.models.function import FunctionModel

    async def stream(messages: list, info: object):  # type: ignore[no-untyped-def]
        text = last_user_text(messages)
        yield f"Before the gate ({text.split()[0]})."
        gate = Path(text.split()[-1])
        while not gate.exists():
            await asyncio.sleep(0.05)
        yield " After the gate."

    return FunctionModel(stream_function=stream, model_name="gated")
