"""Tool calls a small model cannot get wrong: the ``local`` model's grammar-constrained calls.

When Co runs llama.cpp itself (``--model local``) it does not rely on the server's
function-calling chat formats. :class:`ConstrainedModel` wraps the OpenAI-compatible model
and, for each request:

- lists the offered tools in the system prompt as short signatures;
- sends a grammar (:mod:`co_core.agent.grammar`) so the answer is plain text or exactly one
  ``<tool_call>{...}</tool_call>`` naming an offered tool with schema-valid arguments;
- writes earlier calls and their results into the conversation as plain text (the model's
  own chat template needs no tool support);
- turns a call in the answer back into a real tool call.

Servers Co does not control keep the usual path (and ``text_tool_calls`` recovery).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from pydantic_ai.messages import (
    InstructionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from co_core.agent.grammar import CALL_CLOSE, CALL_OPEN, parse_call, tool_call_grammar
from co_core.agent.toolbox import latest_prompt
from co_core.agent.whole import replay
from co_core.sessions.tokens import text_tokens

LOCAL_TOOL_BUDGET = 250  # tokens of tool signatures per request: prompt work is slow on a CPU
MAX_ANSWER_TOKENS = 512
RESULT_CHARS = 3000  # of one tool result, as the small model reads it

HOW_TO_CALL = (
    "To use a tool, answer with only "
    f'{CALL_OPEN}{{"name": "TOOL", "arguments": {{...}}}}{CALL_CLOSE} and wait for its '
    "result. If no tool is needed, answer the user directly."
)


def _type_name(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "value"
    if "enum" in schema:
        return "|".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return f"list[{_type_name(schema.get('items'))}]"
    return {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}.get(
        str(kind), "value"
    )


def signature(tool: ToolDefinition) -> str:
    """``read_file(path: str, start_line: int = 1): Read a text file.``"""
    schema = tool.parameters_json_schema or {}
    required = set(schema.get("required") or ())
    params = []
    for name, prop in (schema.get("properties") or {}).items():
        text = f"{name}: {_type_name(prop)}"
        if name not in required and isinstance(prop, dict) and "default" in prop:
            text += f" = {json.dumps(prop['default'])}"
        elif name not in required:
            text += " = null"
        params.append(text)
    doc = " ".join((tool.description or "").split("\n\n")[0].split())
    return f"- {tool.name}({', '.join(params)}): {doc}"


def tools_text(tools: Sequence[ToolDefinition]) -> str:
    return "### Tools\n" + "\n".join(signature(t) for t in tools) + "\n" + HOW_TO_CALL


def result_text(part: ToolReturnPart) -> str:
    """A tool's result as a small model reads it best: the display text, not JSON."""
    content = part.content
    display = getattr(content, "display", None)
    if isinstance(display, str):
        text = display
        if getattr(content, "has_more", False):
            text += "\n(more results: ask for the next page)"
    elif isinstance(content, str):
        text = content
    else:
        text = part.model_response_str()
    if len(text) > RESULT_CHARS:
        text = text[:RESULT_CHARS] + "\n[… cut]"
    return text


def call_text(part: ToolCallPart) -> str:
    args = part.args_as_dict() if not isinstance(part.args, str) or part.args else {}
    body = json.dumps({"name": part.tool_name, "arguments": args}, ensure_ascii=False)
    return f"{CALL_OPEN}{body}{CALL_CLOSE}"


def as_text(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The conversation with tool calls and results written as plain messages."""
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            parts = [
                TextPart(call_text(p)) if isinstance(p, ToolCallPart) else p
                for p in message.parts
                if isinstance(p, (TextPart, ToolCallPart))
            ]
            out.append(dataclasses.replace(message, parts=parts or [TextPart("")]))
            continue
        if not isinstance(message, ModelRequest):
            out.append(message)
            continue
        notes, kept = [], []
        for part in message.parts:
            if (
                isinstance(part, ToolReturnPart)
                and getattr(part, "outcome", "success") != "success"
            ):
                notes.append(f"{part.tool_name} failed: {result_text(part)}")
            elif isinstance(part, ToolReturnPart):
                notes.append(f"Result of {part.tool_name}:\n{result_text(part)}")
            elif isinstance(part, RetryPromptPart):
                where = f"{part.tool_name} failed" if part.tool_name else "Not accepted"
                notes.append(f"{where}: {part.model_response()}")
            else:
                kept.append(part)
        if notes:
            kept.insert(0, UserPromptPart("\n\n".join(notes)))
        out.append(dataclasses.replace(message, parts=kept))
    return out


class ConstrainedModel(WrapperModel):
    """The ``local`` model, answering in text or one grammar-checked tool call."""

    co_tool_budget = LOCAL_TOOL_BUDGET  # read by the toolbox (co_core.agent.toolbox)

    def __init__(
        self, wrapped: Any, *, max_tokens: int = MAX_ANSWER_TOKENS, small: bool = True
    ) -> None:
        super().__init__(wrapped)
        self.max_tokens = max_tokens
        # A tiny model: the short system prompt (co_core.agent.build) and Co's steering
        # (co_core.agent.guide) suit it better.
        self.co_small = small

    def co_tool_tokens(self, tool: ToolDefinition) -> int:
        """What one tool costs here: its signature line, not a JSON schema."""
        return text_tokens(signature(tool)) + 1

    def _prepare(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        params: ModelRequestParameters,
    ) -> tuple[list[ModelMessage], ModelSettings, ModelRequestParameters]:
        settings: dict[str, Any] = dict(model_settings or {})
        settings.setdefault("max_tokens", self.max_tokens)
        tools = list(params.function_tools)
        instructions = list(params.instruction_parts or [])
        if tools:
            pairs = [(t.name, t.parameters_json_schema) for t in tools]
            # A call Co asked a tiny model for: its strings are copied from the user's words.
            copy = (
                latest_prompt(messages) if self.co_small and not params.allow_text_output else None
            )
            grammar = tool_call_grammar(pairs, text=params.allow_text_output, copy_from=copy)
            settings["extra_body"] = {**(settings.get("extra_body") or {}), "grammar": grammar}
            instructions.append(InstructionPart(tools_text(tools)))
        plain = dataclasses.replace(params, function_tools=[], instruction_parts=instructions)
        return as_text(messages), settings, plain  # type: ignore[return-value]

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        history, settings, plain = self._prepare(messages, model_settings, model_request_parameters)
        response = await self.wrapped.request(history, settings, plain)
        return as_calls(response, model_request_parameters.function_tools)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncIterator[StreamedResponse]:
        # A call must be whole before it is shown: answers come whole, replayed as a stream.
        response = await self.request(messages, model_settings, model_request_parameters)
        yield replay(
            response,
            messages,
            model_request_parameters,
            model_name=self.model_name,
            system=self.system,
        )


def as_calls(response: ModelResponse, tools: Sequence[ToolDefinition]) -> ModelResponse:
    """A response whose text is a grammar-shaped call, as that real tool call."""
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    found = parse_call(text, {t.name: t for t in tools})
    if found is None:
        return response
    name, args = found
    return dataclasses.replace(response, parts=[ToolCallPart(name, args)])
