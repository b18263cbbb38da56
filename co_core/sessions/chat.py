"""What the chat loop (``co chat``, ``co ask``) calls: record turns, resume, fit, compact.

``Recorder`` keeps the in-memory history and the store in step (the store's view of a
session is exactly what the chat loop holds), ``Memory`` measures, advises and compacts.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from co_core.sessions.compact import Advice, Compaction, advice, compact
from co_core.sessions.history import patch_dangling
from co_core.sessions.memory import ContextMeter, ContextUsage, context_window, measure
from co_core.sessions.store import SessionInfo, SessionStore, new_session

BAR_WIDTH = 30


@dataclass
class Recorder:
    """One session's link to the store: ``save`` after every turn appends only what is new."""

    store: SessionStore | None  # None: sessions.save is off, nothing is written
    info: SessionInfo
    saved: int = 0  # how many messages of the in-memory history the store already has

    @classmethod
    def start(
        cls, store: SessionStore | None, *, cwd: Path | None = None, model: str = ""
    ) -> Recorder:
        return cls(store, new_session(cwd=cwd, model=model))

    @classmethod
    def resume(cls, store: SessionStore, session: str) -> tuple[Recorder, list[Any]]:
        """``/resume ID`` / ``co chat --resume ID``: the session (id or unique prefix) and
        the history to continue from, dangling tool calls answered."""
        info = store.resolve(session)
        return cls._open(store, info)

    @classmethod
    def latest(
        cls, store: SessionStore, cwd: Path | None = None
    ) -> tuple[Recorder, list[Any]] | None:
        """``co chat --continue``: the last session of this directory, or None."""
        info = store.latest(cwd)
        return cls._open(store, info) if info else None

    @classmethod
    def _open(cls, store: SessionStore, info: SessionInfo) -> tuple[Recorder, list[Any]]:
        stored = store.load(info.id, patch=False)
        return cls(store, info, saved=len(stored)), patch_dangling(stored)

    def save(self, history: Sequence[Any], usage: Any = None, spent: Any = None) -> None:
        """After a turn (finished, failed or cancelled): store ``history[saved:]`` atomically,
        with the turn's ``TurnUsage`` (``spent``) when it is known."""
        new = list(history[self.saved :])
        if self.store is None or not new:
            return
        self.store.save_turn(self.info, new, usage, spent)
        self.saved = len(history)

    def usage_rows(self) -> list[dict[str, Any]]:
        """The usage of every turn saved so far (a resumed session's ``/cost`` starts here)."""
        if self.store is None or not self.info.turns:
            return []
        return self.store.turn_usage(self.info.id)

    def compacted(self, result: Compaction) -> None:
        """Record a compaction of the in-memory history (after ``save`` of every turn)."""
        if self.store is not None and self.info.turns:
            self.store.save_compaction(self.info.id, result.summary, result.replaced)
        self.saved = len(result.messages)


@dataclass
class Memory:
    """Context bookkeeping for one chat: the fitting capability, /context, auto-compaction."""

    section: Any = None  # the ``sessions`` settings section
    meter: ContextMeter = field(default_factory=ContextMeter)

    def capability(self) -> Any:
        """Give this to ``Agent(capabilities=[...])`` so every request fits the window."""
        from co_core.sessions.capability import FitContext

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
        from co_core.sessions.compact import NothingToCompact

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


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def sessions_text(store: SessionStore, cwd: Path | None = None, limit: int = 20) -> str:
    """``/sessions``: this directory's sessions, newest first (id, age, turns, title)."""
    found = store.list(cwd=cwd or Path.cwd(), limit=limit)
    if not found:
        return "no saved sessions in this directory (`co sessions list` shows all)"
    now = time.time()
    return "\n".join(
        f"{s.id}  {_age(now - s.updated):>8}  {s.turns:>3} turns  {s.title}" for s in found
    )


def resume_completions(store: SessionStore, prefix: str) -> list[tuple[str, str]]:
    """(id, title) pairs for completing ``/resume PREFIX``."""
    return store.ids(prefix)
