"""Compaction: the model summarises older turns into one message that replaces them.

The summary is a user-prompt request plus a short acknowledging response, so the history
still alternates and starts at a turn; the last ``keep_turns`` turns stay word for word and
the cut falls on a turn boundary, so no tool call is separated from its return. The store
keeps the full original (``SessionStore.save_compaction`` records only the replacement).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from co_core.kernel.errors import CoError
from co_core.sessions.counting import Counter, Overflow
from co_core.sessions.history import turn_starts
from co_core.sessions.overflow import context_overflow, too_long
from co_core.sessions.tokens import CHARS_PER_TOKEN, chars_for, part_text

SUMMARY_HEADER = "Summary of the earlier conversation (compacted by Co):"
ACK = "Understood. I will continue from this summary."
SUMMARY_INSTRUCTIONS = """You compress conversations between a user and an AI assistant.
Write a concise summary of the transcript you are given, to replace it in the assistant's
memory. Keep: the user's goals and preferences, decisions taken, facts learned (file names,
paths, identifiers, numbers), what tools did and found, and anything still to be done.
Write it in the third person, as plain text, without preamble."""
TRANSCRIPT_PART_LIMIT = 2000 * CHARS_PER_TOKEN

Advice = Literal["compact", "suggest"] | None


class NothingToCompact(CoError):
    """The history is too short to compact (every turn is a recent one)."""


@dataclass
class Compaction:
    messages: list[Any]  # the new history: summary pair + recent turns
    summary: list[Any]  # the summary pair alone (what the store records)
    replaced: int  # how many messages of the old history the summary stands for
    text: str


def advice(fraction: float, section: Any = None) -> Advice:
    """``compact`` at ``auto_compact_at`` (90 %), ``suggest`` at ``suggest_compact_at`` (50 %)."""
    if fraction >= float(getattr(section, "auto_compact_at", 0.9)):
        return "compact"
    if fraction >= float(getattr(section, "suggest_compact_at", 0.5)):
        return "suggest"
    return None


def transcript(messages: Sequence[Any]) -> str:
    """The messages as plain text for the summariser (long tool outputs shortened)."""
    lines: list[str] = []
    for message in messages:
        for part in message.parts:
            kind = part.part_kind
            text = part_text(part)
            if len(text) > TRANSCRIPT_PART_LIMIT:
                half = TRANSCRIPT_PART_LIMIT // 2
                text = f"{text[:half]}\n[… {len(text) - 2 * half} characters left out …]\n{text[-half:]}"
            if kind == "user-prompt":
                lines.append(f"User: {text}")
            elif kind == "text":
                lines.append(f"Assistant: {text}")
            elif kind == "tool-call":
                lines.append(f"Assistant called tool {text}")
            elif kind == "tool-return":
                lines.append(f"Tool {part.tool_name} returned: {text}")
            elif kind == "retry-prompt":
                lines.append(f"Tool call error: {text}")
    return "\n".join(lines)


def split_point(messages: Sequence[Any], keep_turns: int) -> int:
    """Index of the first message kept verbatim (a turn start), or 0 if nothing is old."""
    starts = turn_starts(messages)
    if len(starts) <= keep_turns:
        return 0
    return starts[-keep_turns]


def summary_messages(text: str) -> list[Any]:
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    return [
        ModelRequest(parts=[UserPromptPart(f"{SUMMARY_HEADER}\n\n{text.strip()}")]),
        ModelResponse(parts=[TextPart(ACK)]),
    ]


def _cut_middle(text: str, limit: int) -> str:
    head, tail = limit // 3, limit - limit // 3
    note = f"[… {len(text) - head - tail} characters of the middle left out …]"
    return f"{text[:head]}\n{note}\n{text[-tail:]}"


OVERSIZE = 8  # characters per token no tokenizer exceeds: a pre-cut that loses nothing


async def counted_transcript(text: str, max_tokens: int, counter: Counter) -> tuple[str, int]:
    """The transcript cut in the middle to ``max_tokens`` as ``counter`` counts, and its
    tokens. Text far beyond any tokenizer's reach is cut before it is counted."""
    if len(text) > max_tokens * OVERSIZE:
        text = _cut_middle(text, max_tokens * OVERSIZE)
    for _ in range(4):  # each cut is proportional; the count after it decides
        (tokens,) = await counter.count([text])
        if tokens <= max_tokens:
            return text, tokens
        text = _cut_middle(text, max(chars_for(max_tokens, text, tokens) * 19 // 20, 400))
    return text, tokens


def _shrink(overflow: Overflow) -> float:
    """How much shorter the transcript must be, from what the model said: to 85 % of its
    window (the summary needs room too), else by a quarter."""
    if overflow.window and overflow.prompt_tokens:
        return min(overflow.window * 0.85 / overflow.prompt_tokens, 0.9)
    return 0.75


async def compact(
    messages: Sequence[Any],
    model: Any,
    *,
    keep_turns: int = 2,
    max_tokens: int | None = None,
    counter: Counter | None = None,
    progress: Callable[[int], None] | None = None,
) -> Compaction:
    """Summarise all but the last ``keep_turns`` turns with ``model``; raise
    ``NothingToCompact`` when there is nothing older than that. ``max_tokens`` bounds the
    transcript sent to the summariser, as ``counter`` counts (it must fit the model's
    window itself); if the model still finds it too long, it is cut to the model's own
    count and sent once more. ``progress`` hears how many characters of summary the model
    has written so far."""
    from pydantic_ai import Agent

    cut = split_point(messages, keep_turns)
    if cut == 0:
        raise NothingToCompact(
            f"nothing to compact: the conversation has {keep_turns} turn(s) or fewer"
        )
    old = list(messages[:cut])
    counter = counter or Counter()
    summariser: Agent[None, str] = Agent(model, instructions=SUMMARY_INSTRUCTIONS)
    written = 0

    async def count(ctx: Any, events: Any) -> None:
        nonlocal written
        async for event in events:
            kind = getattr(event, "event_kind", "")
            if kind == "part_start" and getattr(event.part, "part_kind", "") == "text":
                written += len(event.part.content)
            elif kind == "part_delta" and hasattr(event.delta, "content_delta"):
                written += len(event.delta.content_delta or "")
            else:
                continue
            if progress is not None:
                progress(written)

    text = transcript(old)
    limit = max_tokens if max_tokens is not None else max(len(text), 1)
    for attempt in range(2):
        shown, tokens = await counted_transcript(text, limit, counter)
        written = 0
        try:
            result = await summariser.run(
                f"Transcript to summarise:\n\n{shown}",
                event_stream_handler=count if progress is not None else None,
            )
            break
        except Exception as exc:
            overflow = context_overflow(exc)
            if overflow is None:
                raise
            if attempt == 1:
                raise too_long(model, overflow.window or limit, overflow.prompt_tokens) from exc
            counter.learn(overflow, tokens)
            limit = max(int(tokens * _shrink(overflow)), 200)
    text = str(result.output).strip() or "(the earlier conversation had nothing to keep)"
    summary = summary_messages(text)
    return Compaction([*summary, *messages[cut:]], summary, cut, text)
