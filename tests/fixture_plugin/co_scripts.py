"""Scripted models for `co` subprocesses in tests: ``--model function:co_scripts:chat``."""

from __future__ import annotations

import json

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart

from co_core import ToolResult
from co_core.testing import last_user_text, scripted_model

QUOTED = ("read_file", "run_shell_command")  # their output is quoted in the answer as it is


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
        if last_user_text(messages).startswith("contra "):  # an answer the result belies
            return ModelResponse(parts=[TextPart("Nothing matches that.")])
        if last.tool_name == "slow" and last_user_text(messages).startswith("later "):
            name = last_user_text(messages).split()[1]  # "later NAME": wait, then write
            return ModelResponse(parts=[ToolCallPart("write_note", {"name": name, "text": "x"})])
        content = last.content
        shown = content.display if isinstance(content, ToolResult) else content
        if last.tool_name in QUOTED:  # a model quoting a file or an output without a fence
            return ModelResponse(parts=[TextPart(f"Here it is:\n\n{shown}\n\nThat is all.")])
        return ModelResponse(parts=[TextPart(f"Tool said: {shown}")])
    text = last_user_text(messages)
    if text.startswith("Transcript to summarise:"):  # /compact: a summary, shorter than it
        return ModelResponse(parts=[TextPart(f"The user sent {text.count('User:')} messages.")])
    word, _, rest = text.partition(" ")
    if word == "later":  # "later NAME": a slow call first, then a write that asks
        return ModelResponse(parts=[ToolCallPart("slow", {"seconds": 2.0})])
    if word == "slow":
        return ModelResponse(parts=[ToolCallPart("slow", {"seconds": float(rest or 30)})])
    if word in ("colour", "contra"):
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
    if word == "call":  # any tool: "call NAME {json arguments}"
        name, _, args = rest.partition(" ")
        return ModelResponse(parts=[ToolCallPart(name, json.loads(args or "{}"))])
    if word == "run":  # co-shell's command tool: "run sleep 600"
        return ModelResponse(parts=[ToolCallPart("run_shell_command", {"cmd": rest})])
    if word == "resource":
        return ModelResponse(parts=[ToolCallPart("use_resource", {})])
    if word == "readfile":  # co-shell's read_file
        return ModelResponse(parts=[ToolCallPart("read_file", {"path": rest})])
    if word == "shell":  # co-shell's run_shell_command
        return ModelResponse(parts=[ToolCallPart("run_shell_command", {"cmd": rest})])
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


def budgeted() -> object:
    """``chat``'s script on a model with a small tool budget of its own, as ``local`` has:
    the toolbox counts the tools with the fitting's counter within that budget."""
    from pydantic_ai.models.function import FunctionModel

    from co_core.testing import scripted_model

    base = scripted_model(script, chunk=6, delay=0.02)

    class BudgetedModel(FunctionModel):
        co_tool_budget = 250

    return BudgetedModel(base.function, stream_function=base.stream_function, model_name="sig")


def small() -> object:
    """``chat``'s script on a model that says it is tiny (as the built-in ``local`` does):
    Co steers it and, once a call has run, answers with what the call returned itself."""
    from pydantic_ai.models.function import FunctionModel

    from co_core.testing import scripted_model

    base = scripted_model(script, chunk=6, delay=0.02)

    class SmallModel(FunctionModel):
        co_small = True

    return SmallModel(base.function, stream_function=base.stream_function, model_name="small")


def stuck() -> object:
    """A model that makes the same failing call whatever it is told (the loop guard's case)."""

    def again(messages: list, info: object) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("always_wrong", {"value": "x"})])

    return scripted_model(again)
