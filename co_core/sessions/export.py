"""Sessions as Markdown or JSON, from the stored JSON (no pydantic-ai import needed)."""

from __future__ import annotations

import json
import time
from typing import Any

from co_core.sessions.store import SessionInfo, SessionStore

FENCE = "````"


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _block(text: str, lang: str = "") -> str:
    return f"{FENCE}{lang}\n{text}\n{FENCE}"


def message_markdown(message: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for part in message.get("parts", []):
        kind = part.get("part_kind")
        if kind == "user-prompt":
            out.append(f"### You\n\n{_text(part.get('content', ''))}")
        elif kind == "text":
            out.append(f"### Co\n\n{part.get('content', '')}")
        elif kind == "tool-call":
            args = part.get("args")
            args_text = args if isinstance(args, str) else json.dumps(args or {}, indent=2)
            out.append(f"**tool call** `{part.get('tool_name')}`\n\n{_block(args_text, 'json')}")
        elif kind == "tool-return":
            out.append(
                f"**tool result** `{part.get('tool_name')}`\n\n{_block(_text(part.get('content')))}"
            )
        elif kind == "retry-prompt":
            out.append(
                f"**tool error** `{part.get('tool_name')}`\n\n{_block(_text(part.get('content')))}"
            )
    return out


def to_markdown(info: SessionInfo, messages: list[dict[str, Any]]) -> str:
    head = [
        f"# {info.title or 'Untitled session'}",
        "",
        f"- session: `{info.id}`",
        f"- model: {info.model or 'unknown'}",
        f"- directory: `{info.cwd}`",
        f"- started: {_when(info.created)}, last turn: {_when(info.updated)}",
        f"- turns: {info.turns}, tokens in/out: {info.input_tokens}/{info.output_tokens}"
        + (f", cost: ${info.cost_usd:.4f}" if info.cost_usd else ""),
        "",
    ]
    body = [chunk for m in messages for chunk in message_markdown(m)]
    return "\n".join(head) + "\n" + "\n\n".join(body) + "\n"


def to_json(info: SessionInfo, messages: list[dict[str, Any]]) -> str:
    return json.dumps(
        {"session": info.as_dict(), "messages": messages}, indent=2, ensure_ascii=False
    )


def export(store: SessionStore, info: SessionInfo, fmt: str) -> str:
    """The full original conversation (compactions do not hide anything here)."""
    messages = [json.loads(raw) for raw in store.raw_messages(info.id)]
    return to_json(info, messages) if fmt == "json" else to_markdown(info, messages)
