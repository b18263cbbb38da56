"""Tool calls that small local models write as JSON text instead of real tool calls.

Recognised shapes: a bare ``{"name": ..., "arguments": {...}}`` object, the same inside a
Markdown code fence, and ``<tool_call>...</tool_call>`` tags (Qwen/Hermes style). Only
names of tools that exist are accepted, so ordinary JSON in an answer stays text.
:func:`recover` turns such an answer into real calls (setting ``text_tool_calls``; the policy
gate calls it when a response arrives).
"""

from __future__ import annotations

import dataclasses
import json
import re
import uuid
from collections.abc import Collection
from typing import Any

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.S)


def _as_call(obj: Any, known: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):  # {"type": "function", "function": {...}}
        obj = obj["function"]
    name = obj.get("name") or obj.get("tool") or obj.get("tool_name")
    if not isinstance(name, str) or name not in known:
        return None
    args = obj.get("arguments", obj.get("parameters", obj.get("args", {})))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return None
    extra = set(obj) - {
        "name",
        "tool",
        "tool_name",
        "arguments",
        "parameters",
        "args",
        "type",
        "id",
    }
    if extra:
        return None  # some other JSON that happens to have a "name" key
    return name, args


def _load(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def parse_text_tool_calls(text: str, known: Collection[str]) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls written in ``text``, or [] when the text is an ordinary answer."""
    body = text.strip()
    if not body:
        return []
    candidates: list[Any] = []
    tagged = _TAGGED.findall(body)
    if tagged:
        candidates = [_load(t) for t in tagged]
    else:
        fenced = _FENCED.match(body)
        if fenced:
            body = fenced.group(1).strip()
        if body[:1] not in "[{":
            return []
        loaded = _load(body)
        candidates = loaded if isinstance(loaded, list) else [loaded]
    calls = [_as_call(c, known) for c in candidates]
    if not calls or any(c is None for c in calls):
        return []
    return [c for c in calls if c is not None]


def recover(response: ModelResponse, known: Collection[str]) -> ModelResponse:
    """A response that is only tool calls written as text, as those tool calls (else as it is)."""
    if any(isinstance(p, ToolCallPart) for p in response.parts):
        return response
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    calls = parse_text_tool_calls(text, known)
    if not calls:
        return response
    parts = [
        ToolCallPart(name, args, tool_call_id=f"text-{uuid.uuid4().hex[:12]}")
        for name, args in calls
    ]
    return dataclasses.replace(response, parts=parts)
