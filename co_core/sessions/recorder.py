"""A conversation's link to the session store: save each turn, resume, list.

``Recorder`` keeps the in-memory history and the store in step: the store's view of a
session is exactly what the chat loop holds.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from co_core.sessions.compact import Compaction
from co_core.sessions.history import patch_dangling
from co_core.sessions.store import SessionInfo, SessionStore, new_session


@dataclass
class Recorder:
    """One session's link to the store: ``save`` after every turn appends only what is new."""

    store: SessionStore | None  # None: sessions.save is off, nothing is written
    info: SessionInfo
    saved: int = 0  # how many messages of the in-memory history the store already has

    @classmethod
    def start(
        cls,
        store: SessionStore | None,
        *,
        cwd: Path | None = None,
        model: str = "",
        source: str = "chat",
    ) -> Recorder:
        return cls(store, new_session(cwd=cwd, model=model, source=source))

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

    @property
    def saved_id(self) -> str | None:
        """The session's id once it is in the store (a new session is written with its
        first turn); None before, so no one is told of an id that does not exist."""
        if self.store is None or not self.store.exists(self.info.id):
            return None
        return self.info.id

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


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def sessions_text(store: SessionStore, cwd: Path | None = None, limit: int = 20) -> str:
    """``/sessions``: this directory's chats, newest first (id, age, turns, title), and
    how many ``co ask`` sessions were left out."""
    here = cwd or Path.cwd()
    found = store.list(cwd=here, limit=limit, source="chat")
    asked = len(store.list(cwd=here, source="ask"))
    lines = [
        f"{s.id}  {_age(time.time() - s.updated):>8}  {s.turns:>3} turns  {s.title}" for s in found
    ]
    if not lines:
        lines.append("no saved chats in this directory (`co sessions list` shows all)")
    if asked:
        lines.append(f"(and {asked} from `co ask`: co sessions list --source ask)")
    return "\n".join(lines)


def resume_completions(store: SessionStore, prefix: str) -> list[tuple[str, str]]:
    """(id, title) pairs for completing ``/resume PREFIX``."""
    return store.ids(prefix)
