"""An exporter wrapper that masks secrets and adds cost before spans leave the process.

Every exporter (SQLite and OTLP alike) sits behind one of these, so a secret in a tool's
arguments, an error message or an event never reaches the disk or a collector. It runs
on the batch processor's worker thread, not the thread running the turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Status

from co_core.redact import MASK, Redactor, is_secret_key

COST_ATTRIBUTE = "co.cost_usd"
_JSON_MIN = 64  # shorter JSON text is cheap enough to scan as text
_WHOLE_MAX_CHARS = 4_000_000  # JSON texts remembered whole (masked once), in characters
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
_secret_key = lru_cache(maxsize=4096)(is_secret_key)
_decoder = json.JSONDecoder()


def _skip(text: str, i: int) -> int:
    while text[i] in " \t\r\n":
        i += 1
    return i


class SpanRedactor:
    """co_core.redact's masking, made cheap for spans.

    A turn's model-request spans each carry the whole conversation so far, so the same
    text comes back again and again: JSON attributes are masked leaf by leaf (secret-named
    keys masked whole, as in the audit trail) and each distinct string is scanned once.
    A JSON text seen before (the tool definitions on every request) is masked once, and a
    message list that extends one seen before (the next request's history) is masked from
    where the earlier one ended, so a turn's masking grows with its length, not its square.
    """

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.text = lru_cache(maxsize=16384)(redactor.text)
        self._items: dict[str, Any] = {}  # one JSON list item (a message) -> masked
        self._whole: dict[str, str] = {}  # a whole JSON text -> masked
        self._whole_chars = 0
        self._lists: list[tuple[str, str]] = []  # recent lists, newest last: (text, masked) less []

    def _json(self, text: str) -> str:
        done = self._whole.get(text)
        if done is None:
            done = (
                self._json_list(text) if text[0] == "[" else _encode(self.value(json.loads(text)))
            )
            if self._whole_chars + len(text) > _WHOLE_MAX_CHARS:
                self._whole.clear()
                self._whole_chars = 0
            self._whole[text] = done
            self._whole_chars += len(text)
        return done

    def _json_list(self, text: str) -> str:
        """Mask a JSON list; its items (messages) are each masked once, see the class."""
        out: list[str] = []
        i = _skip(text, 1)
        for head, masked in reversed(self._lists):
            # head is an earlier list without its "]": text continues it with "," and more
            n = len(head)
            if len(text) > n and text[n] == "," and text.startswith(head):
                out.append(masked)
                i = _skip(text, n + 1)
                break
        while text[i] != "]":
            item, end = _decoder.raw_decode(text, i)
            raw = text[i:end]
            masked = self._items.get(raw)
            if masked is None:
                if len(self._items) > 4096:
                    self._items.clear()
                masked = self._items[raw] = _encode(self.value(item))
            out.append(masked)
            i = _skip(text, end)
            if text[i] == ",":
                i = _skip(text, i + 1)
            elif text[i] != "]":
                raise ValueError("not a JSON list")
        if text[i + 1 :].strip():
            raise ValueError("text after the JSON list")
        inner = ",".join(out)
        if out and text[-1] == "]":  # what the continuation check above relies on
            self._lists = [*self._lists[-7:], (text[:-1], inner)]
        return "[" + inner + "]"

    def value(self, value: Any, key: str | None = None) -> Any:
        if key is not None and _secret_key(key) and value not in (None, "", [], {}):
            if isinstance(value, int) and key.lower().endswith("tokens"):
                return value  # a count of tokens, not a token
            if not isinstance(value, bool):
                return MASK
        if isinstance(value, str):
            if len(value) >= _JSON_MIN and value[:1] in "[{":
                try:
                    return self._json(value)
                except (ValueError, IndexError):
                    return self.text(value)
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
