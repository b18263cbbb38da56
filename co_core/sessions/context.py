"""The context window of one conversation: fit every request, ``/context``, compaction.

``ContextKeeper`` gives the agent the fitting capability, measures how full the next
request would be, and compacts older turns when the settings say so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from co_core.sessions.compact import (
    Advice,
    Compaction,
    NothingToCompact,
    advice,
    compact,
    split_point,
)
from co_core.sessions.counting import Counting
from co_core.sessions.history import turn_starts
from co_core.sessions.tokens import (
    ContextMeter,
    ContextUsage,
    context_window,
    history_tokens,
    measure,
)

if TYPE_CHECKING:
    from co_core.sessions.recorder import Recorder

BAR_WIDTH = 30


@dataclass(frozen=True)
class CompactPlan:
    """What ``/compact`` would summarise: the turns before the recent ones."""

    turns: int
    messages: int
    tokens: int
    kept_turns: int


@dataclass
class ContextKeeper:
    """Context bookkeeping for one chat: the fitting capability, /context, auto-compaction."""

    section: Any = None  # the ``sessions`` settings section
    meter: ContextMeter = field(default_factory=ContextMeter)
    counting: Counting = field(default_factory=Counting)  # each model's token counter

    def capability(self) -> Any:
        """Give this to ``Agent(capabilities=[...])`` so every request fits the window."""
        from co_core.sessions.fitting import FitContext

        return FitContext(section=self.section, meter=self.meter, counting=self.counting)

    def window(self, model: Any) -> int:
        """The window Co fits to: the model's own when it said one, else the settings'."""
        return self.counting.counter(model).effective(context_window(model, self.section))

    async def usage(self, history: Sequence[Any], model: Any = None) -> ContextUsage:
        """How full the next request would be, counted as the fitting counts: system prompt
        and tools as the last request carried them (tools as that model reads them, as the
        tool budget counts them), plus the whole history (before fitting, so it shows when
        compaction is due)."""
        counter, sizes = self.counting.counter(model), self.counting.sizes(model)
        await sizes.prepare(history)
        prompt, tools = await counter.fixed(self.meter.system, self.meter.tool_defs)
        return measure(
            history,
            self.window(model),
            system=prompt,
            tools=tools,
            reserve=int(getattr(self.section, "reserve_output", 1024)),
            sizes=sizes,
            scale=counter.scale,
            counted_by=counter.describe,
        )

    async def tokens(self, messages: Sequence[Any], model: Any = None) -> int:
        """``messages``' tokens as ``model``'s counter counts them (as the fitting does)."""
        sizes = self.counting.sizes(model)
        await sizes.prepare(messages)
        return round(history_tokens(messages, sizes) * self.counting.counter(model).scale)

    async def carried(self, model: Any = None) -> tuple[list[str], int]:
        """The tools the last request carried, and their tokens as ``usage`` counts them."""
        defs = self.meter.tool_defs
        _, tools = await self.counting.counter(model).fixed([], defs)
        return [d.name for d in defs], tools

    async def plan_or_none(self, history: Sequence[Any], model: Any = None) -> CompactPlan | None:
        try:
            return await self.plan(history, model)
        except NothingToCompact:
            return None

    async def plan(self, history: Sequence[Any], model: Any = None) -> CompactPlan:
        """What compaction would summarise now (raises NothingToCompact if nothing)."""
        keep = int(getattr(self.section, "keep_recent_turns", 2))
        cut = split_point(history, keep)
        if cut == 0:
            raise NothingToCompact(
                f"nothing to compact: the conversation has {keep} turn(s) or fewer"
            )
        old = list(history[:cut])
        return CompactPlan(len(turn_starts(old)), cut, await self.tokens(old, model), keep)

    async def advise(self, history: Sequence[Any], model: Any = None) -> Advice:
        return advice((await self.usage(history, model)).fraction, self.section)

    async def compact(
        self,
        history: Sequence[Any],
        model: Any,
        recorder: Recorder | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> Compaction:
        """``/compact``: summarise older turns; the recorder notes it in the store.
        ``progress`` hears the characters of summary written so far."""
        keep = int(getattr(self.section, "keep_recent_turns", 2))
        counter = self.counting.counter(model)
        room = counter.budget(
            self.window(model), int(getattr(self.section, "reserve_output", 1024))
        )
        result = await compact(
            history,
            model,
            keep_turns=keep,
            max_tokens=max(room - 300, 200),
            counter=counter,
            progress=progress,
        )
        before = await self.tokens(history[: result.replaced], model)
        after = await self.tokens(result.summary, model)
        if after >= before:  # a summary longer than what it stands for would only cost
            raise NothingToCompact(
                f"nothing compacted: the model's summary ({after:,} tokens) was not shorter "
                f"than the {result.replaced} older messages it would replace ({before:,} "
                "tokens); they stay as they were"
            )
        if recorder is not None:
            recorder.compacted(result)
        return result

    async def after_turn(
        self, history: list[Any], model: Any, recorder: Recorder | None = None
    ) -> tuple[list[Any], str | None]:
        """Call after saving a turn. Compacts at ``auto_compact_at`` and returns the new
        history; at ``suggest_compact_at`` returns a hint. The text is for the user."""
        usage = await self.usage(history, model)
        level = advice(usage.fraction, self.section)
        percent = round(usage.fraction * 100)
        if level == "compact":
            try:
                result = await self.compact(history, model, recorder)
            except NothingToCompact as exc:
                if await self.plan_or_none(history, model) is None:
                    return history, f"context {percent}% full; the recent turns alone fill it"
                return history, f"context {percent}% full; {exc}"
            after = round((await self.usage(result.messages, model)).fraction * 100)
            return result.messages, f"context was {percent}% full: compacted to {after}%"
        if level == "suggest":
            return history, f"context {percent}% full; /compact summarises older turns"
        return history, None

    async def context_text(self, history: Sequence[Any], model: Any = None) -> str:
        """``/context``: tokens used against the limit with a bar, and what occupies them."""
        return context_text(await self.usage(history, model))


def _bar(fraction: float, width: int = BAR_WIDTH) -> str:
    filled = min(width, round(fraction * width))
    return "█" * filled + "░" * (width - filled)


def context_text(usage: ContextUsage) -> str:
    rows = [
        ("system prompt", usage.system),
        ("tools", usage.tools),
        ("conversation", usage.history),
        ("tool outputs", usage.tool_outputs),
    ]
    free = max(usage.window - usage.used, 0)
    lines = [
        f"context: {usage.used:,} / {usage.window:,} tokens ({usage.fraction:.0%})"
        f"  {_bar(usage.fraction)}",
        *(f"  {name:<14}{tokens:>9,}" for name, tokens in rows),
        f"  {'free':<14}{free:>9,}  ({usage.reserve:,} kept for the reply)",
    ]
    if usage.reported:
        lines.append(f"  the model reported {usage.reported:,} input tokens for the last request")
    lines.append(f"  ({usage.counted_by})")
    return "\n".join(lines)


def compact_report(
    plan: CompactPlan,
    summary_tokens: int,
    before: ContextUsage,
    after: ContextUsage,
    seconds: float,
) -> str:
    """What ``/compact`` gained, in words: from how full to how full, and why so little
    when the recent turns (kept word for word) hold most of it. Every number is counted
    by the model's counter (``ContextKeeper.tokens``, ``usage``)."""
    freed = before.used - after.used
    line = (
        f"Compacted {plan.messages} older messages ({plan.tokens:,} tokens) into a "
        f"{summary_tokens:,}-token summary in {seconds:.1f} s: context "
        f"{before.fraction:.0%} → {after.fraction:.0%} ({before.used:,} → {after.used:,} "
        f"tokens, {freed:,} freed)."
    )
    if freed < before.used * 0.1:
        line += (
            f" Little was freed: most of the context is the last {plan.kept_turns} turns,"
            " kept word for word (sessions.keep_recent_turns), the tools and the system prompt."
        )
    return line
