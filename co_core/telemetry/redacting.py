"""An exporter wrapper that masks secrets and adds cost before spans leave the process.

Every exporter (SQLite and OTLP alike) sits behind one of these, so a secret in a tool's
arguments, an error message or an event never reaches the disk or a collector. It runs
on the batch processor's worker thread, not the thread running the turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Status

from co_core.kernel.redact import MASK, Redactor, is_secret_key

COST_ATTRIBUTE = "co.cost_usd"
_JSON_MIN = 64  # shorter JSON-looking text is masked as text


class SpanRedactor:
    """co_core.kernel.redact's masking, for span attributes.

    Attributes often hold JSON text (messages, tool arguments): it is masked leaf by leaf,
    so secret-named keys are masked whole, as in the audit trail.
    """

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.text = redactor.text

    def value(self, value: Any, key: str | None = None) -> Any:
        if key is not None and is_secret_key(key) and value not in (None, "", [], {}):
            if isinstance(value, int) and key.lower().endswith("tokens"):
                return value  # a count of tokens, not a token
            if not isinstance(value, bool):
                return MASK
        if isinstance(value, str):
            if len(value) >= _JSON_MIN and value[:1] in "[{":
                try:
                    parsed = json.loads(value)
                except ValueError:
                    return self.text(value)
                return json.dumps(self.value(parsed), ensure_ascii=False, default=str)
            return self.text(value)
        if isinstance(value, dict):
            return {str(k): self.value(v, str(k)) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        if value is None or isinstance(value, (bool, int, float)):
            return value
        return self.text(repr(value))


def _clean(redactor: SpanRedactor, attrs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in dict(attrs or {}).items():
        clean = redactor.value(value, key)
        out[key] = tuple(clean) if isinstance(clean, list) else clean
    return out


def clean_span(span: ReadableSpan, redactor: SpanRedactor) -> ReadableSpan:
    """A copy of ``span`` with secrets masked and, for model requests, the cost added.
    (Content is kept out where spans are made: co_core.telemetry.agent_spans.)"""
    attrs = _clean(redactor, span.attributes)
    if COST_ATTRIBUTE not in attrs:
        from co_core.telemetry.usage import span_cost

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
        self.redactor = SpanRedactor(redactor)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([clean_span(s, self.redactor) for s in spans])

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.inner.shutdown()


class ReportingExporter(SpanExporter):
    """Wraps the OTLP exporter: a collector that is down is one warning line, not a log storm."""

    def __init__(self, inner: SpanExporter, target: str, warn: Callable[[str], None]) -> None:
        self.inner = inner
        self.target = target
        self.warn = warn
        self.warned = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception:
            result = SpanExportResult.FAILURE
        if result != SpanExportResult.SUCCESS and not self.warned:
            self.warned = True
            self.warn(f"traces could not be sent to the OpenTelemetry collector at {self.target}")
        return result

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.inner.shutdown()
