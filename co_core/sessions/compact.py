"""Compaction: the model summarises older turns into one message that replaces them.

The summary is a user-prompt request plus a short acknowledging response, so the history
still alternates and starts at a turn; the last ``keep_turns`` turns stay word for word and
the cut falls on a turn boundary, so no tool call is separated from its return. The store
keeps the full original (``SessionStore.save_compaction`` records only the replacement).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from co_core.kernel.errors import CoError
from co_core.sessions.history import turn_starts
from co_core.sessions.tokens import CHARS_PER_TOKEN, part_text

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


def fit_transcript(text: str, max_tokens: int | None) -> str:
    """The transcript cut in the middle when it would not fit the summariser's window."""
    if max_tokens is None or len(text) <= max_tokens * CHARS_PER_TOKEN:
        return text
    limit = max(max_tokens * CHARS_PER_TOKEN, 400)
    head, tail = limit // 3, limit - limit // 3
    note = f"[… {len(text) - head - tail} characters of the middle left out …]"
    return f"{text[:head]}\n{note}\n{text[-tail:]}"


async def compact(
    messages: Sequence[Any], model: Any, *, keep_turns: int = 2, max_tokens: int | None = None
) -> Compaction:
    """Summarise all but the last ``keep_turns`` turns with ``model``; raise
    ``NothingToCompact`` when there is nothing older than that. ``max_tokens`` bounds the
    transcript sent to the summariser (it must fit the model's window itself)."""
    from pydantic_ai import Agent

    cut = split_point(messages, keep_turns)
    if cut == 0:
        raise NothingToCompact(
            f"nothing to compact: the conversation has {keep_turns} turn(s) or fewer"
        )
    old = list(messages[:cut])
    summariser: Agent[None, str] = Agent(model, instructions=SUMMARY_INSTRUCTIONS)
    shown = fit_transcript(transcript(old), max_tokens)
    result = await summariser.run(f"Transcript to summarise:\n\n{shown}")
    text = str(result.output).strip() or "(the earlier conversation had nothing to keep)"
    summary = summary_messages(text)
    return Compaction([*summary, *messages[cut:]], summary, cut, text)
