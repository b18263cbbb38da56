"""Sending spans to an OpenTelemetry collector without ever holding Co up for long.

The OTLP/HTTP exporter is co-core's ``otlp`` extra, imported here only, and only when a
collector is configured. A collector that is down, or one that accepts the connection and
never answers, costs Co at most :func:`export_timeout` seconds at exit: each export gives
up after that long (``OTEL_EXPORTER_OTLP_TIMEOUT`` may say otherwise), and flushing and
shutting down wait for the collector at most that long in all, however many batches are
left (those are dropped, with one warning line). Nothing waits for it during a turn: the
batch processor's worker thread sends.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

DEFAULT_TIMEOUT = 5.0  # seconds
TIMEOUT_ENV = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")


def export_timeout() -> float:
    """Seconds one export may take, and the most exit waits for the collector."""
    for name in TIMEOUT_ENV:
        raw = os.environ.get(name, "").strip()
        if raw:
            try:
                seconds = float(raw)
            except ValueError:
                continue  # the exporter falls back to its default too; ours is shorter
            if seconds > 0:
                return seconds
    return DEFAULT_TIMEOUT


class ReportingExporter(SpanExporter):
    """Wraps the OTLP exporter: a collector that is down is one warning line, not a log storm."""

    def __init__(self, inner: SpanExporter, target: str, warn: Callable[[str], None]) -> None:
        self.inner = inner
        self.target = target
        self.warn = warn
        self.warned = False

    def report(self, why: str = "") -> None:
        """Say once per session that traces did not reach the collector."""
        if not self.warned:
            self.warned = True
            message = f"traces could not be sent to the OpenTelemetry collector at {self.target}"
            self.warn(message + (f": {why}" if why else ""))

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception:
            result = SpanExportResult.FAILURE
        if result != SpanExportResult.SUCCESS:
            self.report()
        return result

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.inner.shutdown()


class BoundedProcessor(SpanProcessor):
    """A span processor whose ``force_flush`` and ``shutdown`` return within ``seconds``.

    The SDK's batch processor exports everything left on both, one blocking request per
    batch, and does not bound a flush by its timeout; run in a daemon thread and waited
    for at most ``seconds``, a collector that never answers cannot keep Co from exiting.
    """

    def __init__(
        self, inner: SpanProcessor, seconds: float, gave_up: Callable[[str], None]
    ) -> None:
        self.inner = inner
        self.seconds = seconds
        self.gave_up = gave_up

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        self.inner.on_start(span, parent_context=parent_context)

    def _on_ending(self, span: Span) -> None:
        self.inner._on_ending(span)

    def on_end(self, span: ReadableSpan) -> None:
        self.inner.on_end(span)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._within(
            lambda: self.inner.force_flush(timeout_millis),
            min(self.seconds, timeout_millis / 1000),
            "flush",
        )

    def shutdown(self) -> None:
        self._within(self.inner.shutdown, self.seconds, "shutdown")

    def _within(self, work: Callable[[], object], seconds: float, what: str) -> bool:
        done: list[object] = []
        thread = threading.Thread(
            target=lambda: done.append(work()), name=f"co-otlp-{what}", daemon=True
        )
        thread.start()
        thread.join(seconds)
        if thread.is_alive():  # left to end by itself, or with the process
            self.gave_up(f"no answer within {seconds:g} s")
            return False
        return bool(done and done[0] is not False)


def otlp_processor(
    endpoint: str | None,
    target: str,
    wrap: Callable[[SpanExporter], SpanExporter],
    warn: Callable[[str], None],
    schedule_delay_millis: int,
) -> SpanProcessor:
    """The processor sending spans to ``target`` (``endpoint``: Co's setting, else the
    ``OTEL_EXPORTER_OTLP_*`` variables); ``wrap`` is put around the exporter (redaction).
    The caller has checked that the ``otlp`` extra is installed (``extras.missing``)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # the exporter logs every retry; Co says it once (ReportingExporter)
    logging.getLogger("opentelemetry.exporter.otlp").setLevel(logging.CRITICAL)
    seconds = export_timeout()
    options: dict[str, Any] = {"timeout": seconds}
    if endpoint:
        options["endpoint"] = target
    reporting = ReportingExporter(OTLPSpanExporter(**options), target, warn)
    batches = BatchSpanProcessor(
        wrap(reporting),
        schedule_delay_millis=schedule_delay_millis,
        export_timeout_millis=seconds * 1000,
    )
    return BoundedProcessor(batches, seconds, reporting.report)
