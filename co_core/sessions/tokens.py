"""Token sizes and fitting: a budget per model, applied before every request.

Sizes come from a counter (co_core.sessions.counting): the model's own tokenizer where one
is at hand, else the estimate defined here, about 4 characters per token plus a few tokens
of framing per message and part. ``PartSizes`` remembers each part's count while it is in
the history, so a request counts only what is new.

Fitting (``fit_history``) only changes what one request sends; the conversation keeps every
message and the store keeps the full original. In order:

1. tool outputs longer than ``trim_tool_output`` tokens in turns before the current one are
   cut to head and tail with a note saying how much was left out;
2. if the history still does not fit, the oldest whole turns are dropped (a turn never
   splits, so a tool call never loses its return) and a note says how many were left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from co_core.sessions.history import turn_starts

if TYPE_CHECKING:
    from co_core.sessions.counting import Counter

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
PART_OVERHEAD = 3
DEFAULT_WINDOW = 8192
TRIM_NOTE = "[… {omitted} characters of this tool output left out by Co to save context …]"
DROP_NOTE = (
    "[{turns} earlier turn(s) of this conversation were left out to fit the context window;"
    " the user can run /compact to summarise them.]"
)


def text_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if type(value) is int or type(value) is float:
        return repr(value)  # as JSON writes it, without the encoder's cost
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def part_text(part: Any) -> str:
    kind = part.part_kind
    if kind == "tool-call":
        args = part.args if isinstance(part.args, str) else _as_text(part.args or {})
        return f"{part.tool_name}({args})"
    if kind in ("tool-return", "retry-prompt"):
        return _as_text(part.content)
    content = getattr(part, "content", "")
    if isinstance(content, list):
        return " ".join(c if isinstance(c, str) else "[file]" for c in content)
    return _as_text(content)


@dataclass
class _MessageSize:
    message: Any
    parts: Any  # the parts list measured (a message given new parts is measured afresh)
    count: int
    tokens: int
    outputs: int  # of which tool outputs
    trimmed: dict[int, Any] = field(default_factory=dict)  # trim limit -> trimmed message

    def matches(self, message: Any) -> bool:
        return (
            self.message is message
            and self.parts is message.parts
            and self.count == len(message.parts)
        )


class PartSizes:
    """Token counts of parts and messages, by one counter, remembered while they are in
    the history.

    Fitting runs before every request of a turn over a history that only grows, so without
    this every tool output would be serialised and counted again for each request.
    ``prepare`` counts the parts not seen before in one batch (a tokenizer may be a server
    away); the sizes after it are dictionary hits. Entries are matched by identity (a
    trimmed or replaced part or message is a new object and is counted afresh); those not
    seen during one fit are forgotten at the next, so memory stays bounded by the history.
    """

    def __init__(self, counter: Counter) -> None:
        self.counter = counter
        self._now: dict[int, tuple[Any, int]] = {}
        self._before: dict[int, tuple[Any, int]] = {}
        self._messages_now: dict[int, _MessageSize] = {}
        self._messages_before: dict[int, _MessageSize] = {}

    def next_round(self) -> None:
        self._before, self._now = self._now, {}
        self._messages_before, self._messages_now = self._messages_now, {}

    def _known(self, part: Any) -> int | None:
        key = id(part)
        hit = self._now.get(key)
        if hit is None or hit[0] is not part:
            hit = self._before.get(key)
            if hit is None or hit[0] is not part:
                return None
            self._now[key] = hit
        return hit[1]

    def sized(self, message: Any) -> bool:
        """Is ``message`` sized already (all its parts counted)?"""
        hit = self._messages_now.get(id(message)) or self._messages_before.get(id(message))
        return hit is not None and hit.matches(message)

    async def prepare(self, messages: Sequence[Any]) -> None:
        """Count, in one batch, every part of ``messages`` not counted yet (the estimate
        needs no batch: it counts each part when asked)."""
        if not self.counter.batches:
            return
        todo = [p for m in messages if not self.sized(m) for p in m.parts if self._known(p) is None]
        if not todo:
            return
        texts = [self.counter.part_text(p) for p in todo]
        for part, tokens in zip(todo, await self.counter.count(texts), strict=True):
            self._now[id(part)] = (part, tokens)

    def tokens(self, part: Any) -> int:
        """Tokens of ``part`` (prepared, else counted now: a dictionary hit or the estimate)."""
        known = self._known(part)
        if known is None:
            known = self.counter.counted(self.counter.part_text(part))
            self._now[id(part)] = (part, known)
        return known

    def message(self, message: Any) -> _MessageSize:
        key = id(message)
        hit = self._messages_now.get(key)
        if hit is None or not hit.matches(message):
            hit = self._messages_before.get(key)
            if hit is None or not hit.matches(message):
                sizes = [(p.part_kind, self.tokens(p)) for p in message.parts]
                tokens = self.counter.frame(message) + sum(n for _kind, n in sizes)
                outputs = (
                    sum(n for kind, n in sizes if kind == "tool-return")
                    if message.kind == "request"
                    else 0
                )
                hit = _MessageSize(message, message.parts, len(message.parts), tokens, outputs)
            self._messages_now[key] = hit
        return hit


def part_tokens(part: Any) -> int:
    """The estimate for one part, with its framing."""
    return PART_OVERHEAD + text_tokens(part_text(part))


def message_tokens(message: Any, sizes: PartSizes | None = None) -> int:
    if sizes is not None:
        return sizes.message(message).tokens
    return MESSAGE_OVERHEAD + sum(part_tokens(p) for p in message.parts)


def history_tokens(messages: Sequence[Any], sizes: PartSizes | None = None) -> int:
    return sum(message_tokens(m, sizes) for m in messages)


def tool_output_tokens(messages: Sequence[Any], sizes: PartSizes | None = None) -> int:
    if sizes is not None:
        return sum(sizes.message(m).outputs for m in messages)
    return sum(
        part_tokens(p)
        for m in messages
        if m.kind == "request"
        for p in m.parts
        if p.part_kind == "tool-return"
    )


def tools_tokens(tool_defs: Sequence[Any]) -> int:
    """What tool definitions cost by the estimate: name, description and JSON schema of each."""
    total = 0
    for tool in tool_defs:
        schema = getattr(tool, "parameters_json_schema", None) or {}
        text = f"{tool.name} {getattr(tool, 'description', '') or ''} {_as_text(schema)}"
        total += PART_OVERHEAD + text_tokens(text)
    return total


# -- the budget -------------------------------------------------------------------------


def context_window(model: Any = None, section: Any = None) -> int:
    """Tokens the model accepts: settings, else the model's profile, else a local default."""
    configured = getattr(section, "context_window", None)
    if configured:
        return int(configured)
    try:
        from_profile = getattr(model, "context_window", None) if model is not None else None
    except Exception:  # a profile that cannot be resolved offline is not an error here
        from_profile = None
    if isinstance(from_profile, int) and from_profile > 0:
        return from_profile
    return int(getattr(section, "default_context_window", DEFAULT_WINDOW) or DEFAULT_WINDOW)


def chars_for(tokens: int, text: str, counted: int) -> int:
    """How many characters of ``text`` (``counted`` tokens in all) hold about ``tokens``."""
    if counted <= 0:
        return tokens * CHARS_PER_TOKEN
    return max(len(text) * tokens // counted, 1)


def trim_tool_output(part: Any, limit_tokens: int, sizes: PartSizes | None = None) -> Any:
    """A tool return cut to head and tail when longer than ``limit_tokens``, with a note."""
    if part.part_kind != "tool-return":
        return part
    if sizes is not None and sizes.tokens(part) <= limit_tokens:  # counted before
        return part
    text = _as_text(part.content)
    counted = sizes.tokens(part) if sizes is not None else text_tokens(text)
    limit = chars_for(limit_tokens, text, counted)
    if counted <= limit_tokens or len(text) <= limit:
        return part
    head, tail = (limit * 3) // 5, (limit * 2) // 5
    omitted = len(text) - head - tail
    cut = f"{text[:head]}\n{TRIM_NOTE.format(omitted=omitted)}\n{text[-tail:]}"
    return replace(part, content=cut)


def _trim_message(message: Any, limit_tokens: int, sizes: PartSizes | None = None) -> Any:
    if message.kind != "request":
        return message
    if sizes is None:
        return _trimmed(message, limit_tokens, None)
    known = sizes.message(message).trimmed
    if limit_tokens not in known:
        known[limit_tokens] = _trimmed(message, limit_tokens, sizes)
    return known[limit_tokens]


def _trimmed(message: Any, limit_tokens: int, sizes: PartSizes | None) -> Any:
    if not any(p.part_kind == "tool-return" for p in message.parts):
        return message
    parts = [trim_tool_output(p, limit_tokens, sizes) for p in message.parts]
    if all(a is b for a, b in zip(parts, message.parts, strict=True)):
        return message
    return replace(message, parts=parts)


@dataclass
class FitReport:
    """What fitting did to one request."""

    budget: int
    tokens_before: int
    tokens_after: int
    dropped_turns: int = 0
    trimmed_outputs: int = 0


async def fit(
    messages: Sequence[Any], budget: int, *, sizes: PartSizes, trim_tokens: int = 2000
) -> tuple[list[Any], FitReport]:
    """``fit_history`` with every size counted first, in at most two batches: the parts
    not counted before, then the trimmed forms of old tool outputs made in this round."""
    sizes.next_round()
    await sizes.prepare(messages)
    starts = turn_starts(messages)
    cut = _trimmed_old(messages, starts, trim_tokens, sizes)
    fresh = [c for c, m in zip(cut, messages, strict=False) if c is not m and not sizes.sized(c)]
    if fresh:
        await sizes.prepare(fresh)
    return _fitted(messages, budget, starts, cut, sizes)


def fit_history(
    messages: Sequence[Any],
    budget: int,
    *,
    trim_tokens: int = 2000,
    sizes: PartSizes | None = None,
) -> tuple[list[Any], FitReport]:
    """The history cut to ``budget`` tokens: big old tool outputs trimmed, then the oldest
    turns dropped, never splitting a turn. The latest turn is always kept whole.
    ``sizes`` remembers part sizes between calls (the capability passes one per session)."""
    starts = turn_starts(messages)
    return _fitted(
        messages, budget, starts, _trimmed_old(messages, starts, trim_tokens, sizes), sizes
    )


def _trimmed_old(
    messages: Sequence[Any], starts: list[int], trim_tokens: int, sizes: PartSizes | None
) -> list[Any]:
    """The messages before the latest turn, their big tool outputs trimmed."""
    last = starts[-1] if starts else 0
    return [_trim_message(m, trim_tokens, sizes) for m in messages[:last]]


def _fitted(
    messages: Sequence[Any],
    budget: int,
    starts: list[int],
    cut: list[Any],
    sizes: PartSizes | None,
) -> tuple[list[Any], FitReport]:
    # one pass (this runs before every request, over the whole history): each message's
    # size, and for those before the latest turn their trimmed form and its size
    trimmed: list[Any] = []
    tokens: list[int] = []
    before = trimmed_outputs = 0
    last = len(cut)
    for index, message in enumerate(messages):
        size = message_tokens(message, sizes)
        before += size
        if index < last and cut[index] is not message:
            shorter = cut[index]
            size = message_tokens(shorter, sizes)
            trimmed_outputs += sum(
                1 for a, b in zip(shorter.parts, message.parts, strict=True) if a is not b
            )
            message = shorter
        trimmed.append(message)
        tokens.append(size)
    report = FitReport(budget, before, before)
    report.trimmed_outputs = trimmed_outputs
    total = sum(tokens)
    dropped = 0
    while total > budget and dropped < len(starts) - 1:
        end = starts[dropped + 1]
        total -= sum(tokens[starts[dropped] : end])
        dropped += 1
    kept = trimmed[starts[dropped] :] if dropped else trimmed
    if dropped:
        from pydantic_ai.messages import UserPromptPart

        note = UserPromptPart(DROP_NOTE.format(turns=dropped))
        first = replace(kept[0], parts=[note, *kept[0].parts])
        total += message_tokens(first, sizes) - message_tokens(kept[0], sizes)
        kept = [first, *kept[1:]]
    report.dropped_turns = dropped
    report.tokens_after = total
    return kept, report


# -- measuring and the capability --------------------------------------------------------


@dataclass
class ContextUsage:
    """What occupies the context window, in tokens as the fitting counts them."""

    window: int
    system: int = 0
    tools: int = 0
    history: int = 0  # conversation text, without tool outputs
    tool_outputs: int = 0
    reserve: int = 0
    reported: int | None = None  # input tokens the provider reported for the last request
    counted_by: str = "estimated: about 4 characters per token"

    @property
    def used(self) -> int:
        return self.system + self.tools + self.history + self.tool_outputs

    @property
    def fraction(self) -> float:
        return self.used / self.window if self.window else 0.0


def measure(
    messages: Sequence[Any],
    window: int,
    *,
    system: int = 0,
    tools: int = 0,
    reserve: int = 0,
    sizes: PartSizes | None = None,
    scale: float = 1.0,
    counted_by: str = "",
) -> ContextUsage:
    """How full the context would be if ``messages`` were sent now, with ``system`` and
    ``tools`` tokens already counted; every figure multiplied by ``scale`` (what the
    counter learnt from the model's own counts)."""
    outputs = tool_output_tokens(messages, sizes)
    reported = None
    for message in reversed(messages):
        if message.kind == "response":
            reported = getattr(message.usage, "input_tokens", 0) or None
            break
    usage = ContextUsage(
        window=window,
        system=round(system * scale),
        tools=round(tools * scale),
        history=round((history_tokens(messages, sizes) - outputs) * scale),
        tool_outputs=round(outputs * scale),
        reserve=reserve,
        reported=reported,
    )
    if counted_by:
        usage.counted_by = counted_by
    return usage


@dataclass
class ContextMeter:
    """Shared between the capability and the REPL: what the last request carried."""

    last_fit: FitReport | None = None
    system: list[str] = field(default_factory=list)
    tool_defs: list[Any] = field(default_factory=list)
    _measure: Callable[[], ContextUsage] | None = field(default=None, repr=False)
    _last: ContextUsage | None = field(default=None, repr=False)

    def measured(self, how: Callable[[], ContextUsage]) -> None:
        """Record how to measure the last request; it is measured only if someone asks
        (``last``), not on every request of a turn."""
        self._measure, self._last = how, None

    @property
    def last(self) -> ContextUsage | None:
        if self._measure is not None:
            self._last, self._measure = self._measure(), None
        return self._last
