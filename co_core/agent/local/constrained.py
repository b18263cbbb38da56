"""Tool calls a small model cannot get wrong: constrained calls for llama.cpp and Ollama.

For ``--model local`` (llama.cpp started by Co), and for any llama.cpp or Ollama model Co
steers (co_core.agent.small), Co does not rely on the server's function-calling chat
formats. :class:`ConstrainedModel` wraps the OpenAI-compatible model and, for each request:

- lists the offered tools in the system prompt as short signatures;
- constrains the answer to exactly one call of an offered tool with schema-valid
  arguments, or an answer, with **one JSON schema** (:func:`response_schema`): sent to
  llama.cpp as ``response_format`` (``{"type": "json_object", "schema": ...}``, which
  llama-cpp-python's server and ``llama-server`` turn into a grammar with llama.cpp's own
  converter) and to Ollama as ``response_format`` (``json_schema``, Ollama's ``format``).
  A call's arguments match the tool's own schema, or the narrower one the steering put in
  the tool's metadata (:data:`ARGUMENTS`: values copied from the user's words);
- where a plain answer may come instead of a call, Co's own llama.cpp server gets the
  same schema as a grammar with a plain-text alternative (:data:`WORDS`), so the model
  answers in plain words rather than inside JSON (Ollama gets ``{"answer": ...}``); against
  the JSON-only form it measured one task better of 60 (bench/README.md, "Plain answers"),
  within noise: the first candidate to drop for a single constraint form;
- decodes at the ``steering.temperature`` (0 by default: the same words, the same call);
- writes earlier calls and their results into the conversation as plain text (the model's
  own chat template needs no tool support); for a steered model a long result is cut to
  the lines that answer the question (co_core.agent.local.view), and the question is
  asked again after it;
- turns a call in the answer back into a real tool call.

Other servers keep the usual path (and ``text_tool_calls`` recovery).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal

from pydantic_ai.messages import (
    InstructionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from co_core.agent.local.view import budgeted
from co_core.agent.local.whole import replay
from co_core.agent.small import STEERED_RESULT_CHARS
from co_core.agent.tools.toolbox import latest_prompt

Server = Literal["llama.cpp", "ollama"]  # how the schema is sent
ARGUMENTS = "co.arguments"  # a tool's metadata: the JSON schema its call's arguments match
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"  # how earlier calls read in the history
# A plain answer beside a call, for Co's own llama.cpp server (GBNF: llama-cpp-python takes
# a grammar as well as a schema): anything that does not start as a call does.
WORDS = r"[^{<] [^\x00]*"
# pydantic-ai's note that tools joined mid-run; Co lists a request's tools in its prompt
ANNOUNCED = "The following tool(s) are now available"

LOCAL_TOOL_BUDGET = 250  # tokens of tool signatures per request: prompt work is slow on a CPU
MAX_ANSWER_TOKENS = 512
RESULT_CHARS = 3000  # of one tool result, as the small model reads it

HOW_TO_CALL = (
    'To use a tool, answer with only {"name": "TOOL", "arguments": {...}} and wait for its '
    "result. If no tool is needed, answer the user directly."
)
HOW_TO_CALL_JSON = (
    'Answer in JSON: {"name": "TOOL", "arguments": {...}} to use a tool and wait for its '
    'result, or {"answer": "..."} to answer the user directly.'
)
ANSWER_NOW = "Answer my question from this: {question}"


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


def tools_text(tools: Sequence[ToolDefinition], how: str = HOW_TO_CALL) -> str:
    return "### Tools\n" + "\n".join(signature(t) for t in tools) + "\n" + how


def result_text(part: ToolReturnPart, question: str = "", budget: int = RESULT_CHARS) -> str:
    """A tool's result as a small model reads it best: the display text, not JSON, at
    most ``budget`` characters (the lines that match ``question`` when it is longer)."""
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
    if question:
        return budgeted(text, question, budget)
    if len(text) > budget:
        text = text[:budget] + "\n[… cut]"
    return text


def call_text(part: ToolCallPart) -> str:
    args = part.args_as_dict() if not isinstance(part.args, str) or part.args else {}
    body = json.dumps({"name": part.tool_name, "arguments": args}, ensure_ascii=False)
    return f"{CALL_OPEN}{body}{CALL_CLOSE}"


def as_text(
    messages: Sequence[ModelMessage], *, steer: bool = False, budget: int = RESULT_CHARS
) -> list[ModelMessage]:
    """The conversation with tool calls and results written as plain messages. ``steer``:
    a long result is cut to what matches the user's question, which is asked again after
    the latest results (a small model otherwise forgets what it was asked)."""
    question = latest_prompt(list(messages)) if steer else ""
    last = max((i for i, m in enumerate(messages) if isinstance(m, ModelRequest)), default=-1)
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
                notes.append(f"{part.tool_name} failed: {result_text(part, question, budget)}")
            elif isinstance(part, ToolReturnPart):
                text = result_text(part, question, budget).rstrip()
                notes.append(f"Result of {part.tool_name}:\n{text}")
            elif isinstance(part, RetryPromptPart):
                where = f"{part.tool_name} failed" if part.tool_name else "Not accepted"
                notes.append(f"{where}: {part.model_response()}")
            elif getattr(part, "part_kind", "") == "tool-availability-delta" or (
                isinstance(part, SystemPromptPart) and part.content.startswith(ANNOUNCED)
            ):
                continue  # "tools are now available": the system prompt lists them
            else:
                kept.append(part)
        if notes and question and messages[last] is message:
            notes.append(ANSWER_NOW.format(question=question))
        if notes:
            kept.insert(0, UserPromptPart("\n\n".join(notes)))
        out.append(dataclasses.replace(message, parts=kept))
    return out


def arguments_schema(tool: ToolDefinition) -> dict[str, Any]:
    """The JSON schema a call's arguments must match: the steering's (:data:`ARGUMENTS`),
    else the tool's own."""
    given = (tool.metadata or {}).get(ARGUMENTS)
    schema = given if isinstance(given, dict) else tool.parameters_json_schema
    return dict(schema or {"type": "object", "properties": {}})


def _renamed(schema: Any, names: dict[str, str]) -> Any:
    if isinstance(schema, list):
        return [_renamed(item, names) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _renamed(v, names) for k, v in schema.items() if k != "$defs"}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.rpartition("/")[2] in names:
        out["$ref"] = f"#/$defs/{names[ref.rpartition('/')[2]]}"
    return out


def response_schema(tools: Sequence[ToolDefinition], *, text: bool) -> dict[str, Any]:
    """The one answer a request may get, as a JSON schema: a call ``{"name": ...,
    "arguments": ...}`` of one of ``tools``, or (``text``) ``{"answer": "..."}``. Each
    tool's definitions (``$defs``) move to the top, where references find them."""
    options: list[dict[str, Any]] = []
    defs: dict[str, Any] = {}
    for index, tool in enumerate(tools):
        args = arguments_schema(tool)
        names = {key: f"t{index}-{key}" for key in args.get("$defs") or {}}
        for key, value in (args.get("$defs") or {}).items():
            defs[names[key]] = _renamed(value, names)
        options.append(
            {
                "type": "object",
                "properties": {"name": {"const": tool.name}, "arguments": _renamed(args, names)},
                "required": ["name", "arguments"],
            }
        )
    if text:
        options.append(
            {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
        )
    schema: dict[str, Any] = options[0] if len(options) == 1 else {"anyOf": options}
    return {**schema, "$defs": defs} if defs else schema


def request_body(schema: dict[str, Any], server: Server) -> dict[str, Any]:
    """The schema as each server takes it: llama.cpp reads a ``json_object`` with a
    ``schema`` (llama-cpp-python and ``llama-server`` alike), Ollama a ``json_schema``."""
    if server == "ollama":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema},
            }
        }
    return {"response_format": {"type": "json_object", "schema": schema}}


def words_or_call(schema: dict[str, Any]) -> str:
    """A GBNF grammar: a plain answer (:data:`WORDS`) or a call ``schema`` allows, the
    call part written by llama.cpp's own converter (llama-cpp-python's)."""
    import re

    from llama_cpp.llama_grammar import json_schema_to_gbnf

    calls = json_schema_to_gbnf(json.dumps(schema))
    calls = re.sub(r"^root ::=", "co-call ::=", calls, flags=re.M)
    return f"root ::= co-call | co-words\nco-words ::= {WORDS}\n{calls}"


WORDS_ONLY = "root ::= [^<`\\x00]+\n"  # an answer in words, and nothing else


def parse_answer(text: str, tools: Sequence[ToolDefinition]) -> tuple[str, dict[str, Any]] | str:
    """What an answer shaped by :func:`response_schema` holds: a call (name, arguments),
    or the answer's text (the text as it stands when it is no such JSON)."""
    try:
        data = json.loads(text.strip()) if text.strip().startswith("{") else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return text
    if isinstance(data.get("answer"), str) and "name" not in data:
        return str(data["answer"])
    if data.get("name") in {t.name for t in tools}:
        args = data.get("arguments", {})
        return str(data["name"]), args if isinstance(args, dict) else {}
    return text


class ConstrainedModel(WrapperModel):
    """A llama.cpp or Ollama model, answering in text or one schema-checked tool call."""

    co_tool_budget = LOCAL_TOOL_BUDGET  # read by the toolbox (co_core.agent.tools.toolbox)

    def __init__(
        self,
        wrapped: Any,
        *,
        max_tokens: int = MAX_ANSWER_TOKENS,
        small: bool = True,
        server: Server = "llama.cpp",
        words: bool = False,
        temperature: float | None = 0.0,
        result_chars: int | None = None,
    ) -> None:
        super().__init__(wrapped)
        self.max_tokens = max_tokens
        # A model Co steers: the short system prompt (co_core.agent.assembly.build) and Co's
        # steering (co_core.steering) suit it better.
        self.co_small = small
        self.server = server
        # Plain answers as plain text (a grammar): Co's own llama.cpp server, which has
        # llama.cpp's converter at hand; JSON ``{"answer": ...}`` elsewhere.
        self.words = words and server == "llama.cpp"
        self.temperature = temperature
        self.result_chars = result_chars or (STEERED_RESULT_CHARS if small else RESULT_CHARS)

    def _prepare(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        params: ModelRequestParameters,
    ) -> tuple[list[ModelMessage], ModelSettings, ModelRequestParameters]:
        settings: dict[str, Any] = dict(model_settings or {})
        settings.setdefault("max_tokens", self.max_tokens)
        if self.temperature is not None:
            settings.setdefault("temperature", self.temperature)
        tools = list(params.function_tools)
        instructions = list(params.instruction_parts or [])
        body: dict[str, Any] = {}
        if tools:
            text = params.allow_text_output
            if text and self.words:
                body = {"grammar": words_or_call(response_schema(tools, text=False))}
                how = HOW_TO_CALL
            else:
                body = request_body(response_schema(tools, text=text), self.server)
                how = HOW_TO_CALL_JSON
            instructions.append(InstructionPart(tools_text(tools, how)))
        elif self.co_small:
            # Words only, for a steered model: no call written as text either (a small model
            # copies the calls it sees in the conversation), one paragraph (it rambles on).
            settings.setdefault("stop_sequences", ["\n\n"])
            if self.words:
                body = {"grammar": WORDS_ONLY}
            else:
                body = request_body(response_schema([], text=True), self.server)
        if body:
            settings["extra_body"] = {**(settings.get("extra_body") or {}), **body}
        plain = dataclasses.replace(params, function_tools=[], instruction_parts=instructions)
        if getattr(plain, "introduced_tool_names", None):  # tools are in the prompt, not news
            plain = dataclasses.replace(plain, introduced_tool_names=set())
        history = as_text(messages, steer=self.co_small, budget=self.result_chars)
        return history, settings, plain  # type: ignore[return-value]

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        history, settings, plain = self._prepare(messages, model_settings, model_request_parameters)
        response = await self.wrapped.request(history, settings, plain)
        tools = model_request_parameters.function_tools
        if not tools and not self.co_small:
            return response
        return as_calls(response, tools)

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
    """A response shaped by :func:`response_schema`: its call as a real call, its answer as
    text."""
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    found = parse_answer(text, tools)
    if isinstance(found, str):
        return response if found == text else dataclasses.replace(response, parts=[TextPart(found)])
    name, args = found
    return dataclasses.replace(response, parts=[ToolCallPart(name, args)])
