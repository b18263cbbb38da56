"""The trace database: the ``spans`` table, its indexes, and migration of older files.

Plain sqlite3, no OpenTelemetry: ``co traces`` and ``co logs`` read through here too.
The table is the first design's ``spans`` table (id, name, context, kind, start_time,
end_time, attributes, events, status) plus trace id, parent id, duration and status
message columns. An older database is migrated in place by adding what is missing:
columns are only ever added, rows and tables never dropped.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from co_core.kernel import paths

SCHEMA_VERSION = 2

COLUMNS: dict[str, str] = {
    "id": "TEXT PRIMARY KEY",
    "name": "TEXT",
    "context": "TEXT",
    "kind": "TEXT",
    "start_time": "TEXT",
    "end_time": "TEXT",
    "attributes": "TEXT",
    "events": "TEXT",
    "status": "TEXT",
    "trace_id": "TEXT",
    "parent_id": "TEXT",
    "duration_ms": "REAL",
    "status_message": "TEXT",
}

INDEXES = {
    "spans_start_time": "start_time",
    "spans_name": "name",
    "spans_trace_id": "trace_id",
    "spans_parent_id": "parent_id",
}

_BACKFILL = [
    # spans written before the trace id had its own column kept it in the context JSON
    "UPDATE spans SET trace_id = json_extract(context, '$.trace_id') "
    "WHERE trace_id IS NULL AND json_valid(context)",
    "UPDATE spans SET parent_id = json_extract(context, '$.parent_id') "
    "WHERE parent_id IS NULL AND json_valid(context)",
    "UPDATE spans SET duration_ms = (julianday(end_time) - julianday(start_time)) * 86400000.0 "
    "WHERE duration_ms IS NULL AND julianday(end_time) IS NOT NULL "
    "AND julianday(start_time) IS NOT NULL",
]


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection to the trace database; writers create and migrate it first."""
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
        conn.row_factory = sqlite3.Row
        return conn
    paths.ensure_dir(path.parent)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))  # traces are private
    conn = sqlite3.connect(path, timeout=5.0, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    migrate(conn)
    return conn


def prune(conn: sqlite3.Connection, days: int, now: float | None = None) -> int:
    """Delete spans that started more than ``days`` days ago; returns how many went.

    Uses the ``start_time`` index (ISO 8601 UTC text sorts as time does)."""
    import time
    from datetime import UTC, datetime

    cutoff = (now if now is not None else time.time()) - days * 86400
    text = datetime.fromtimestamp(cutoff, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    cursor = conn.execute("DELETE FROM spans WHERE start_time < ?", (text,))
    return max(cursor.rowcount, 0)


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Bring the schema up to date; returns the columns that were added."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = {row[1] for row in conn.execute("PRAGMA table_info(spans)")}
        added: list[str] = []
        if not found:
            cols = ", ".join(f"{name} {kind}" for name, kind in COLUMNS.items())
            conn.execute(f"CREATE TABLE spans ({cols})")
        else:
            for name, kind in COLUMNS.items():
                if name not in found:
                    kind = kind.replace(" PRIMARY KEY", "")  # cannot add a key column later
                    conn.execute(f"ALTER TABLE spans ADD COLUMN {name} {kind}")
                    added.append(name)
            if added:
                for statement in _BACKFILL:
                    conn.execute(statement)
        for index, column in INDEXES.items():
            conn.execute(f"CREATE INDEX IF NOT EXISTS {index} ON spans ({column})")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return added
