"""Counting tokens as the model will: what it reads of each part, in its own tokens.

A :class:`Counter` knows three things about one model: the text it reads of each message
part (``part_text``: the local model reads a tool result as plain text, an OpenAI model as
JSON), how many tokens a batch of texts is (``count``, one call for the whole batch), and
what the chat template adds around each message (``frame``). This base class is the
estimate, about 4 characters per token, for models with no tokenizer at hand;
:class:`TokenizerCounter` is the base of real ones (co_core.agent.counting picks one per
model), which remember every text they counted and fall back to the estimate when their
tokenizer stops answering.

A counter also learns from the model. ``observe`` compares the input tokens a provider
reported with what Co counted for that request; ``learn`` reads a context-length error's
numbers. Both set ``scale``, by which counts are multiplied before they are compared with
the window, and a window the model says it has replaces the configured one (``window``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from co_core.sessions.tokens import (
    MESSAGE_OVERHEAD,
    PART_OVERHEAD,
    PartSizes,
    _as_text,
    part_text,
    text_tokens,
)

REMEMBERED = 50_000  # texts a tokenizer counter keeps counts of (a count is two ints)
PAUSE = 30.0  # seconds a failed tokenizer is not asked again (a hung server costs once)
FEWEST_OBSERVED = 64  # requests smaller than this say too little about the ratio


@dataclass
class Overflow:
    """What a context-length error said: the model's window and the tokens it was sent."""

    window: int | None = None
    prompt_tokens: int | None = None


class Counter:
    """The estimate: about 4 characters per token, a few tokens of framing per message.

    Cheap and dependency-free; it undercounts small-vocabulary models (SmolLM2's tokens
    are about 2.7 characters of English) and overcounts large ones, which ``observe``
    corrects after the first answer and ``margin`` covers before it."""

    label = "estimated: about 4 characters per token"
    exact = False  # a tokenizer counts (True), or this is an estimate
    margin = 0.10  # share of the window kept free for this counter's error
    scale_range = (1.0, 3.0)  # how far observed counts may correct this counter (never below
    # its own count: a request mostly of prose must not make room a later one of code lacks)
    batches = False  # counts are worth asking for in batches, ahead (a tokenizer's)
    request_frame = 0  # tokens a request adds once (the reply's header)
    tool_frame = PART_OVERHEAD  # tokens around one tool's definition

    def __init__(self) -> None:
        self.scale = 1.0
        self.window: int | None = None  # the window the model said it has
        self.observed = False  # a count of the model's own has set ``scale``

    # -- what the model reads ---------------------------------------------------------

    def part_text(self, part: Any) -> str:
        return part_text(part)

    def tool_text(self, tool: Any) -> str:
        schema = getattr(tool, "parameters_json_schema", None) or {}
        return f"{tool.name} {getattr(tool, 'description', '') or ''} {_as_text(schema)}"

    def frame(self, message: Any) -> int:
        """Tokens the chat template adds around ``message`` and its parts."""
        return MESSAGE_OVERHEAD + PART_OVERHEAD * len(message.parts)

    def system_frame(self, texts: Sequence[str]) -> int:
        return MESSAGE_OVERHEAD * len([t for t in texts if t])

    @property
    def describe(self) -> str:
        """How this counter counts, in words, for ``/context``."""
        return self.label

    # -- counting -----------------------------------------------------------------------

    async def count(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text (one batch)."""
        return [text_tokens(t) for t in texts]

    def counted(self, text: str) -> int:
        """Tokens of ``text`` if counted before, else the estimate (never waits)."""
        return text_tokens(text)

    async def fixed(self, system: Sequence[str], tools: Sequence[Any]) -> tuple[int, int]:
        """Tokens of the system prompt's parts and of the tool definitions, as sent."""
        texts = [t for t in system if t]
        counts = await self.count([*texts, *(self.tool_text(t) for t in tools)])
        prompt = sum(counts[: len(texts)]) + self.system_frame(texts) + self.request_frame
        return prompt, sum(counts[len(texts) :]) + self.tool_frame * len(tools)

    def wants_check(self, fraction: float) -> bool:
        """Should the provider count this request (``fraction``: of the window it fills)?"""
        return False

    async def check(self, messages: Sequence[Any]) -> int | None:
        """The provider's own count of ``messages`` (None: it has no count endpoint)."""
        return None

    # -- learning from the model -----------------------------------------------------------

    def observe(self, counted: int, reported: int) -> None:
        """The provider reported ``reported`` input tokens for a request Co counted as
        ``counted`` (before scaling): from now on, counts are scaled by their ratio."""
        if counted < FEWEST_OBSERVED or reported <= 0:
            return
        self.observed = True
        low, high = self.scale_range
        self.scale = min(max(reported / counted, low), high)

    def learn(self, overflow: Overflow, counted: int) -> None:
        """A context-length error: take its numbers (or, without them, count a quarter more)."""
        if overflow.window:
            self.window = overflow.window
        if overflow.prompt_tokens and counted > 0:
            needed = overflow.prompt_tokens / counted
            self.scale = max(self.scale * 1.05, needed * 1.02)
        else:
            self.scale *= 1.25

    def effective(self, window: int) -> int:
        """The window Co fits to: the model's own when it said one."""
        return self.window or window

    def budget(self, window: int, reserve: int) -> int:
        """Unscaled tokens that may be sent: the window less the reply's room and this
        counter's margin, divided by what observation says counts really are."""
        window = self.effective(window)
        usable = window - reserve - math.ceil(window * self.margin)
        return max(int(usable / self.scale), 0)


class Resting(Exception):
    """The tokenizer failed a moment ago; it is not asked again yet."""


class TokenizerCounter(Counter):
    """A counter with a real tokenizer behind ``tokenize``: every text counted once (a
    repeated text is a dictionary hit), a batch per call, the estimate while it fails."""

    label = "counted with the model's tokenizer"
    batches = True
    failed: str | None = None  # why the estimate stands in, for /context

    @property
    def exact(self) -> bool:  # type: ignore[override]
        return self.failed is None

    @property
    def margin(self) -> float:  # type: ignore[override]
        return 0.03 if self.failed is None else Counter.margin

    @property
    def scale_range(self) -> tuple[float, float]:  # type: ignore[override]
        # the tokenizer is exact, only the framing may be off; the estimate may be far off
        return (1.0, 1.5) if self.failed is None else Counter.scale_range

    def __init__(self) -> None:
        super().__init__()
        self._known: dict[tuple[int, int], int] = {}
        self._paused_until = 0.0  # after a failure the tokenizer rests, the estimate counts

    async def tokenize(self, texts: list[str]) -> list[int]:
        """Token counts of ``texts`` from the tokenizer (raise when it cannot)."""
        raise NotImplementedError

    async def count(self, texts: Sequence[str]) -> list[int]:
        keys = [(len(t), hash(t)) for t in texts]
        todo = {key: text for key, text in zip(keys, texts, strict=True) if key not in self._known}
        if todo:
            try:
                if time.monotonic() < self._paused_until:
                    raise Resting(self.failed or "resting")
                counts = await self.tokenize(list(todo.values()))
                self.failed = None
            except Exception as exc:  # the estimate stands in; /context says why
                if not isinstance(exc, Resting):
                    said = str(exc).strip() or type(exc).__name__
                    self.failed = said.splitlines()[0][:200]
                    self._paused_until = time.monotonic() + PAUSE
                return [
                    self._known.get(k) or text_tokens(t) for k, t in zip(keys, texts, strict=True)
                ]
            if len(self._known) + len(todo) > REMEMBERED:
                for old in list(self._known)[: REMEMBERED // 2]:
                    del self._known[old]
            self._known.update(zip(todo, counts, strict=True))
        return [self._known[key] for key in keys]

    def counted(self, text: str) -> int:
        known = self._known.get((len(text), hash(text)))
        return text_tokens(text) if known is None else known

    @property
    def describe(self) -> str:
        if self.failed:
            return f"{Counter.label}; the tokenizer: {self.failed}"
        return self.label


@dataclass
class Counting:
    """The counter of each model, shared by fitting, the tool budget and ``/context``.

    ``counters`` makes a model's counter (co_core.agent.counting gives the real ones);
    each model keeps its counter, what it learnt and the sizes it counted, for the
    session."""

    counters: Callable[[Any], Counter] = field(default=lambda model: Counter())
    _by_model: dict[int, tuple[Any, Counter, PartSizes]] = field(default_factory=dict, repr=False)

    def _entry(self, model: Any) -> tuple[Any, Counter, PartSizes]:
        known = self._by_model.get(id(model))
        if known is None or known[0] is not model:
            if len(self._by_model) > 8:  # models switched many times: forget the oldest
                del self._by_model[next(iter(self._by_model))]
            counter = self.counters(model)
            known = (model, counter, PartSizes(counter))
            self._by_model[id(model)] = known
        return known

    def counter(self, model: Any) -> Counter:
        return self._entry(model)[1]

    def sizes(self, model: Any) -> PartSizes:
        """The part sizes ``model``'s counter has counted (one per model: texts differ)."""
        return self._entry(model)[2]
