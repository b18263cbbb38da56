"""The context window of one conversation: fit every request, ``/context``, compaction.

``ContextKeeper`` gives the agent the fitting capability, measures how full the next
request would be, and compacts older turns when the settings say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from co_core.sessions.compact import Advice, Compaction, NothingToCompact, advice, compact
from co_core.sessions.fitting import FitContext
from co_core.sessions.tokens import ContextMeter, ContextUsage, context_window, measure

if TYPE_CHECKING:
    from co_core.sessions.recorder import Recorder

BAR_WIDTH = 30


@dataclass
class ContextKeeper:
    """Context bookkeeping for one chat: the fitting capability, /context, auto-compaction."""

    section: Any = None  # the ``sessions`` settings section
    meter: ContextMeter = field(default_factory=ContextMeter)

    def capability(self) -> Any:
        """Give this to ``Agent(capabilities=[...])`` so every request fits the window."""
        return FitContext(section=self.section, meter=self.meter)

    def usage(self, history: Sequence[Any], model: Any = None) -> ContextUsage:
        """How full the next request would be: system prompt and tools as last sent, plus
        the whole history (before fitting, so it shows when compaction is due)."""
        return measure(
            history,
            context_window(model, self.section),
            system=self.meter.system,
            tool_defs=self.meter.tool_defs,
            reserve=int(getattr(self.section, "reserve_output", 1024)),
        )

    def advise(self, history: Sequence[Any], model: Any = None) -> Advice:
        return advice(self.usage(history, model).fraction, self.section)

    async def compact(
        self, history: Sequence[Any], model: Any, recorder: Recorder | None = None
    ) -> Compaction:
        """``/compact``: summarise older turns; the recorder notes it in the store."""
        keep = int(getattr(self.section, "keep_recent_turns", 2))
        window = context_window(model, self.section)
        room = window - int(getattr(self.section, "reserve_output", 1024)) - 300
        result = await compact(history, model, keep_turns=keep, max_tokens=max(room, 200))
        if recorder is not None:
            recorder.compacted(result)
        return result

    async def after_turn(
        self, history: list[Any], model: Any, recorder: Recorder | None = None
    ) -> tuple[list[Any], str | None]:
        """Call after saving a turn. Compacts at ``auto_compact_at`` and returns the new
        history; at ``suggest_compact_at`` returns a hint. The text is for the user."""
        usage = self.usage(history, model)
        level = advice(usage.fraction, self.section)
        percent = round(usage.fraction * 100)
        if level == "compact":
            try:
                result = await self.compact(history, model, recorder)
            except NothingToCompact:
                return history, f"context {percent}% full; the recent turns alone fill it"
            after = round(self.usage(result.messages, model).fraction * 100)
            return result.messages, f"context was {percent}% full: compacted to {after}%"
        if level == "suggest":
            return history, f"context {percent}% full; /compact summarises older turns"
        return history, None

    def context_text(self, history: Sequence[Any], model: Any = None) -> str:
        """``/context``: tokens used against the limit with a bar, and what occupies them."""
        return context_text(self.usage(history, model))


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
    lines.append("  (estimates: about 4 characters per token)")
    return "\n".join(lines)
