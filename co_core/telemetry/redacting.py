"""An exporter wrapper that masks secrets and adds cost before spans leave the process.

Every exporter (SQLite and OTLP alike) sits behind one of these, so a secret in a tool's
arguments, an error message or an event never reaches the disk or a collector. It runs
on the batch processor's worker thread, not the thread running the turn. It also leaves
out the attributes an exporter is not to get (:class:`LeaveOut`) and gives a failed span
without a status message its error's message (content on) or type as one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Status, StatusCode

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


@dataclass(frozen=True)
class LeaveOut:
    """Span attributes an exporter does not get: these names, and names with these prefixes."""

    names: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()

    def __call__(self, key: str) -> bool:
        return key in self.names or key.startswith(self.prefixes)


KEEP_ALL = LeaveOut()


def _clean(redactor: SpanRedactor, attrs: Any, leave_out: LeaveOut = KEEP_ALL) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in dict(attrs or {}).items():
        if leave_out(key):
            continue
        clean = redactor.value(value, key)
        out[key] = tuple(clean) if isinstance(clean, list) else clean
    return out


def _error(events: Sequence[Event]) -> str | None:
    """What the first recorded exception says: its message when content kept it (pydantic-ai
    records it only with content on), else its short type name (``ToolRetryError``)."""
    for event in events:
        if event.name == "exception" and event.attributes:
            message = event.attributes.get("exception.message")
            if message:
                return str(message)
            name = event.attributes.get("exception.type")
            if name:
                return str(name).rpartition(".")[2]
    return None


def clean_span(
    span: ReadableSpan, redactor: SpanRedactor, leave_out: LeaveOut = KEEP_ALL
) -> ReadableSpan:
    """A copy of ``span`` with secrets masked, ``leave_out`` left out and, for model
    requests, the cost added. (Content is kept out where spans are made.)"""
    attrs = _clean(redactor, span.attributes, leave_out)
    if COST_ATTRIBUTE not in attrs and attrs.get("gen_ai.operation.name") in (None, "chat"):
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
    elif status.status_code == StatusCode.ERROR and (error := _error(events)):
        status = Status(StatusCode.ERROR, error)  # what failed, even without content
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
    def __init__(
        self, inner: SpanExporter, redactor: Redactor, leave_out: LeaveOut = KEEP_ALL
    ) -> None:
        self.inner = inner
        self.redactor = SpanRedactor(redactor)
        self.leave_out = leave_out

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([clean_span(s, self.redactor, self.leave_out) for s in spans])

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.inner.shutdown()
