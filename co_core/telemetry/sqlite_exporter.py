"""An OpenTelemetry span exporter writing to the local trace database.

It runs behind a ``BatchSpanProcessor``, so rows are written in batches on the
processor's worker thread, one transaction per batch, never on the thread running a turn.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from co_core.telemetry import store

_INSERT = (
    "INSERT OR REPLACE INTO spans (id, name, context, kind, start_time, end_time, attributes, "
    "events, status, trace_id, parent_id, duration_ms, status_message) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def iso(ns: int | None) -> str | None:
    """Nanoseconds since the epoch as ISO 8601 UTC text (sorts and parses in SQLite)."""
    if ns is None:
        return None
    seconds, rest = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{rest // 1000:06d}Z"


# one encoder for every row (json.dumps with options builds a new one per call)
_json = json.JSONEncoder(default=str, ensure_ascii=False).encode


def row(span: ReadableSpan) -> tuple[Any, ...]:
    ctx = span.context
    trace_id = format(ctx.trace_id, "032x") if ctx else None
    span_id = format(ctx.span_id, "016x") if ctx else None
    parent_id = format(span.parent.span_id, "016x") if span.parent else None
    duration = None
    if span.start_time is not None and span.end_time is not None:
        duration = (span.end_time - span.start_time) / 1e6
    context = {"trace_id": trace_id, "span_id": span_id}
    if ctx is not None and ctx.trace_state:
        context["trace_state"] = ctx.trace_state.to_header()
    events = [
        {"name": e.name, "timestamp": iso(e.timestamp), "attributes": dict(e.attributes or {})}
        for e in span.events
    ]
    return (
        span_id,
        span.name,
        _json(context),
        span.kind.name,
        iso(span.start_time),
        iso(span.end_time),
        _json(dict(span.attributes or {})),
        _json(events) if events else "[]",  # most spans have none
        span.status.status_code.name,
        trace_id,
        parent_id,
        duration,
        span.status.description,
    )


class SQLiteSpanExporter(SpanExporter):
    """Writes finished spans to ``path`` (created, migrated and set to WAL on open)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = store.connect(self.path)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        rows = [row(s) for s in spans]
        with self._lock:
            if self._conn is None:
                return SpanExportResult.FAILURE
            try:
                self._conn.execute("BEGIN")
                self._conn.executemany(_INSERT, rows)
                self._conn.execute("COMMIT")
            except sqlite3.Error:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def prune(self, days: int, now: float | None = None) -> int:
        """Drop spans older than ``days`` days (``telemetry.retention_days``)."""
        with self._lock:
            if self._conn is None:
                return 0
            return store.prune(self._conn, days, now)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def shutdown(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
