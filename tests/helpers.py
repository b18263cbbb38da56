"""Helpers for core tests: a Session over the test plugin, driven by a scripted model."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from co_core.models import ResolvedModel
from co_core.scripted import scripted_model
from co_core.session import Session, TurnResult
from co_core.testing import make_app


def session_with(script: Any, settings: dict[str, Any] | None = None, **kw: Any) -> Session:
    """A real Session (real agent, real tools) whose model is ``script``."""
    app = make_app(settings or {})
    session = Session(app, **kw)
    session._model = ResolvedModel(scripted_model(script), "scripted")
    session.prepare()
    return session


def turn(session: Session, prompt: str) -> TurnResult:
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
