"""An exporter wrapper that masks secrets and adds cost before spans leave the process.

Every exporter (SQLite and OTLP alike) sits behind one of these, so a secret in a tool's
arguments, an error message or an event never reaches the disk or a collector. It runs
on the batch processor's worker thread, not the thread running the turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Status

from co_core.redact import Redactor

COST_ATTRIBUTE = "co.cost_usd"


def _clean(redactor: Redactor, attrs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in dict(attrs or {}).items():
        if key.endswith("tokens") and isinstance(value, int) and not isinstance(value, bool):
            out[key] = value  # token counts, not tokens: "token" in the name is no secret here
            continue
        clean = redactor.value(value, key)
        out[key] = tuple(clean) if isinstance(clean, list) else clean
    return out


def clean_span(span: ReadableSpan, redactor: Redactor) -> ReadableSpan:
    """A copy of ``span`` with secrets masked and, for model requests, the cost added."""
    attrs = _clean(redactor, span.attributes)
    if COST_ATTRIBUTE not in attrs:
        from co_core.usage import span_cost

        try:
            cost = span_cost(attrs)
        except Exception:  # a price-table problem must never lose the span
            cost = None
        if cost is not None:
            attrs[COST_ATTRIBUTE] = cost
    events = [
        Event(e.name, _clean(redactor, e.attributes), timestamp=e.timestamp) for e in span.events
    ]
    status = span.status
    if status.description:
        status = Status(status.status_code, redactor.text(status.description))
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=attrs,
        events=events,
        links=span.links,
        kind=span.kind,
        status=status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class RedactingExporter(SpanExporter):
    def __init__(self, inner: SpanExporter, redactor: Redactor) -> None:
        self.inner = inner
        self.redactor = redactor

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([clean_span(s, self.redactor) for s in spans])

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.inner.shutdown()
