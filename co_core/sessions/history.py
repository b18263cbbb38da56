"""Keeping a message history valid: turn boundaries, tool call/return pairs, patching.

A *turn* starts at a request that carries a user prompt and answers no tool call; cutting
a history only at such points never separates a tool call from its return and never leaves
a history that starts with a tool return.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

INTERRUPTED = "Interrupted by user."


def _call_id_parts(message: Any) -> list[Any]:
    return [
        p for p in message.parts if getattr(p, "tool_call_id", None) and p.part_kind != "tool-call"
    ]


def is_turn_start(message: Any) -> bool:
    """A request with a user prompt that answers no tool call: a safe place to cut."""
    if getattr(message, "kind", None) != "request":
        return False
    kinds = {p.part_kind for p in message.parts}
    return "user-prompt" in kinds and not kinds & {"tool-return", "retry-prompt"}


def turn_starts(messages: Sequence[Any]) -> list[int]:
    """Indexes where turns start (the first message always counts as one)."""
    starts = [i for i, m in enumerate(messages) if is_turn_start(m)]
    if messages and (not starts or starts[0] != 0):
        starts.insert(0, 0)
    return starts


def pairing_problems(messages: Sequence[Any]) -> list[str]:
    """What a provider would reject: returns without a call, calls never answered,
    a history starting with a tool return. Empty when the history is valid."""
    problems: list[str] = []
    open_calls: dict[str, str] = {}
    if messages and getattr(messages[0], "kind", "") == "request" and _call_id_parts(messages[0]):
        problems.append("history starts with a tool return")
    for index, message in enumerate(messages):
        if message.kind == "response":
            if open_calls:
                problems.append(f"calls {sorted(open_calls)} unanswered before message {index}")
                open_calls.clear()
            for part in message.parts:
                if part.part_kind == "tool-call":
                    open_calls[part.tool_call_id] = part.tool_name
        else:
            for part in _call_id_parts(message):
                if part.part_kind == "retry-prompt" and part.tool_name is None:
                    continue
                if part.tool_call_id not in open_calls:
                    problems.append(f"return {part.tool_call_id} has no call (message {index})")
                open_calls.pop(part.tool_call_id, None)
    if open_calls:
        problems.append(f"calls {sorted(open_calls)} never answered")
    return problems


def patch_dangling(
    messages: list[Any],
    note: str = INTERRUPTED,
    notes: Mapping[str, tuple[str, str]] | None = None,
) -> list[Any]:
    """Answer every tool call left without a return (an interrupted or failed turn).

    A ModelResponse whose ToolCallParts are not answered by the next request gets
    synthetic ToolReturnParts, so the provider accepts the history on the next run. Each
    says what became of its call: ``notes[call_id]`` (text, outcome: ``failed`` for a tool
    that raised) when given, else ``note`` as ``interrupted``.
    """
    from pydantic_ai.messages import ModelRequest, ToolCallPart, ToolReturnPart

    work = list(messages)  # edited in place: enumerate sees a patched next request
    patched: list[Any] = []
    for index, message in enumerate(work):
        patched.append(message)
        if message.kind != "response":
            continue
        calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
        if not calls:
            continue
        following = work[index + 1] if index + 1 < len(work) else None
        answered = (
            {getattr(p, "tool_call_id", None) for p in following.parts}
            if following is not None and following.kind == "request"
            else set()
        )
        said = notes or {}
        missing = [
            ToolReturnPart(
                c.tool_name,
                said.get(c.tool_call_id, (note, ""))[0],
                tool_call_id=c.tool_call_id,
                outcome=said.get(c.tool_call_id, ("", "interrupted"))[1],  # type: ignore[arg-type]
            )
            for c in calls
            if c.tool_call_id not in answered
        ]
        if not missing:
            continue
        if following is not None and following.kind == "request":
            work[index + 1] = ModelRequest(
                parts=[*missing, *following.parts],
                timestamp=following.timestamp,
                instructions=following.instructions,
                run_id=following.run_id,
            )
        else:
            patched.append(ModelRequest(parts=missing))
    return patched
