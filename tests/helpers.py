"""Helpers for core tests: a conversation over the test plugin, driven by a scripted model."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from co_core.agent.calls import ToolCallRecord
from co_core.agent.conversation import Conversation, TurnResult
from co_core.agent.frontend import Answer, Frontend, NoTerminal
from co_core.agent.models import ResolvedModel
from co_core.testing import make_app, scripted_model


class Asking(NoTerminal):
    """A frontend whose approval questions ``answer(record)`` answers (an Answer, or a
    ``(approved, reason)`` pair); what it showed is kept in ``shown``."""

    interactive = True

    def __init__(self, answer: Callable[[ToolCallRecord], Any]) -> None:
        self.answer = answer
        self.shown: list[tuple[str, str]] = []

    async def approve(self, record: ToolCallRecord) -> Answer:
        given = self.answer(record)
        if isinstance(given, Awaitable):
            given = await given
        return given if isinstance(given, Answer) else Answer(*given)

    def show(self, record: ToolCallRecord) -> None:
        self.shown.append((record.tool, record.status))


def session_with(
    script: Any,
    settings: dict[str, Any] | None = None,
    *,
    frontend: Frontend | None = None,
    **kw: Any,
) -> Conversation:
    """A real conversation (real agent, real tools) whose model is ``script``."""
    app = make_app(settings or {})
    conversation = Conversation(app, frontend=frontend or NoTerminal(), **kw)
    conversation.model = ResolvedModel(scripted_model(script), "scripted")
    conversation.prepare()
    MADE.append(conversation)
    return conversation


MADE: list[Conversation] = []  # closed after each test (tests/conftest.py)


def close_stores() -> None:
    """Close the session stores of the conversations made in a test: an unclosed SQLite
    connection keeps its three files open after it is gone, and a whole run of tests would
    pass the 1,024 descriptors ``select()`` can wait on."""
    while MADE:
        recorder = MADE.pop().recorder
        if recorder is not None and recorder.store is not None:
            recorder.store.close()


def turn(session: Conversation, prompt: str) -> TurnResult:
    return asyncio.run(session.run_turn(prompt))


def span_rows(db: Path) -> list[dict[str, Any]]:
    """The spans table of a trace database, oldest first, with ``attrs`` decoded."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute("SELECT * FROM spans ORDER BY start_time")]
    conn.close()
    for r in rows:
        r["attrs"] = json.loads(r["attributes"])
    return rows
