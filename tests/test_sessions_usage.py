"""Usage and cost are stored with the session: totals in ``co sessions list``, per-turn rows
so a resumed session's ``/cost`` goes on from where it was."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelResponse, TextPart

from co_core.agent.conversation import Conversation
from co_core.agent.models import ResolvedModel
from co_core.sessions.store import SessionStore, store_path
from co_core.telemetry.usage import cost_text
from co_core.testing import make_app, run_co, scripted_model
from tests.sessions_support import turn

PRICED = "openai:gpt-4o-mini"  # a model genai-prices knows, so the turns have a cost


def _reply(messages: list[Any], info: Any) -> ModelResponse:
    return ModelResponse(parts=[TextPart("noted " + "word " * 50)])


def _session(**kw: Any) -> Conversation:
    session = Conversation(make_app({}), **kw)
    session.model = ResolvedModel(scripted_model(_reply), PRICED)
    session.prepare()
    return session


def test_cost_is_stored_with_the_session_and_resume_goes_on(co_dirs: Path) -> None:
    session = _session()
    try:
        for prompt in ("plan the trip", "and the budget"):
            asyncio.run(session.run_turn(prompt))
        spent = session.usage.cost
        sid = session.recorder.info.id
    finally:
        session.close()
    assert spent > 0

    listed = run_co("sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)
    assert row["id"] == sid
    assert Decimal(str(row["cost_usd"])).quantize(Decimal("1e-9")) == spent.quantize(
        Decimal("1e-9")
    )

    again = _session(resume=sid)
    try:
        assert again.usage.cost == spent
        assert "This session: 2 turns" in cost_text(again.usage)
        asyncio.run(again.run_turn("one more"))
        assert "This session: 3 turns" in cost_text(again.usage)
    finally:
        again.close()
    with SessionStore() as store:
        info = store.get(sid)
        assert info.turns == 3 and info.cost_usd > float(spent)
        assert len(store.turn_usage(sid)) == 3


def test_an_older_store_gains_the_cost_column_and_keeps_its_sessions(co_dirs: Path) -> None:
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:  # the first release's sessions table
        db.execute(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '',"
            " model TEXT NOT NULL DEFAULT '', cwd TEXT NOT NULL DEFAULT '', created REAL NOT NULL,"
            " updated REAL NOT NULL, turns INTEGER NOT NULL DEFAULT 0,"
            " messages INTEGER NOT NULL DEFAULT 0, requests INTEGER NOT NULL DEFAULT 0,"
            " input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0)"
        )
        db.execute(
            "INSERT INTO sessions (id, title, created, updated, turns) VALUES"
            " ('abc123abc123', 'old chat', 1, 2, 4)"
        )
    with SessionStore() as store:
        old = store.get("abc123abc123")
        assert old.title == "old chat" and old.turns == 4 and old.cost_usd == 0
        store.save_turn(old, turn("hello again", "hi"), spent={"cost_usd": "0.5"})
        assert store.get("abc123abc123").cost_usd == 0.5
