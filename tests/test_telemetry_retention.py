"""``--trace-content`` on ``co ask`` / ``co chat``, and old spans pruned at tracing setup."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from co_core import telemetry
from co_core.telemetry import store
from co_core.telemetry.settings import TelemetrySettings
from co_core.testing import run_co

MARK = "PROMPT-MARKER-only-with-the-flag"


def _everything(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT name, attributes, events FROM spans").fetchall()
    return "\n".join(" ".join(str(c) for c in row) for row in rows)


def test_trace_content_flag_records_the_prompt_only_when_given(
    testplug: Path, tmp_path: Path
) -> None:
    plain, flagged = tmp_path / "plain.db", tmp_path / "flagged.db"
    for db, extra in ((plain, []), (flagged, ["--trace-content"])):
        result = run_co(
            "ask", *extra, "-m", "function:co_scripts:chat", MARK,
            env={"CO_TRACES_DB": str(db)}, cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert MARK in result.stdout
    assert "co.turn" in _everything(plain)  # the turn was traced either way
    assert MARK not in _everything(plain)
    assert MARK in _everything(flagged)


def test_chat_has_the_flag_too(testplug: Path) -> None:
    result = run_co("chat", "--help")
    assert "--trace-content" in result.stdout


def _old_and_new_rows(db: Path) -> None:
    conn = store.connect(db)
    day = 86400
    for span_id, age in (("a" * 16, 45 * day), ("b" * 16, 31 * day), ("c" * 16, 2 * day)):
        start = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(time.time() - age))
        conn.execute(
            "INSERT INTO spans (id, name, start_time, end_time) VALUES (?, ?, ?, ?)",
            (span_id, f"old-{age // day}d", start, start),
        )
    conn.close()


def _names(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM spans")}


def test_spans_older_than_the_retention_are_pruned_at_setup(co_dirs: Path) -> None:
    db = co_dirs / "traces.db"
    _old_and_new_rows(db)
    assert TelemetrySettings().retention_days == 30  # as the audit trail's default
    telemetry.setup_tracing(TelemetrySettings(sqlite_path=str(db)))
    telemetry.shutdown_tracing()
    assert _names(db) == {"old-2d"}


def test_retention_is_a_setting(co_dirs: Path) -> None:
    db = co_dirs / "traces.db"
    _old_and_new_rows(db)
    telemetry.setup_tracing(TelemetrySettings(sqlite_path=str(db), retention_days=40))
    telemetry.shutdown_tracing()
    assert _names(db) == {"old-31d", "old-2d"}
