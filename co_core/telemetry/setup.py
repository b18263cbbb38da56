"""Turn tracing on: a TracerProvider with SQLite and/or OTLP exporters behind batching.

Imported only on the agent path (``co chat``, ``co ask``); it pulls in opentelemetry-sdk.
"""

from __future__ import annotations

import os
from typing import Any

from co_core.kernel import extras
from co_core.kernel.errors import print_warning
from co_core.telemetry import spans
from co_core.telemetry.settings import TelemetrySettings, otlp_target, telemetry_section

_current: dict[str, Any] = {"provider": None}

# Attributes kept only with content on: the tools sent with each request (their schemas,
# every request again; opt-in in the GenAI conventions) and the run's messages.
WITH_CONTENT_ONLY = frozenset({"gen_ai.tool.definitions", "pydantic_ai.all_messages"})
# Logfire's display hints (``logfire.msg``, ``logfire.json_schema``) mean nothing to the
# trace database; a collector gets them (Logfire reads them).
LOCAL_LEAVE_OUT = ("logfire.",)


def telemetry_settings(settings: Any) -> TelemetrySettings:
    return telemetry_section(settings)


def setup_tracing(
    settings: Any,
    *,
    include_content: bool | None = None,
    schedule_delay_millis: int = 1000,
) -> Any:
    """Start tracing as the settings say; returns the TracerProvider, or None when off.

    ``include_content=True`` is ``--trace-content`` (overrides the setting). Calling it
    again replaces the previous provider (flushing it first). A trace database that cannot
    be opened is a warning, never a reason not to run the turn.
    """
    shutdown_tracing()
    tele = telemetry_settings(settings)
    if not tele.enabled or os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return None
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from co_core.kernel.redact import Redactor, settings_secrets
    from co_core.telemetry.redacting import LeaveOut, RedactingExporter

    content = tele.include_content if include_content is None else include_content
    redactor = Redactor(
        settings_secrets(settings) if not isinstance(settings, TelemetrySettings) else ()
    )
    # the GenAI conventions' opt-in attributes; without content, the run's (empty) messages
    leave_out = LeaveOut() if content else LeaveOut(WITH_CONTENT_ONLY)
    processors: list[Any] = []
    if tele.sqlite:
        from co_core.telemetry.sqlite_exporter import SQLiteSpanExporter

        try:
            sqlite_exporter = SQLiteSpanExporter(tele.database())
        except Exception as exc:
            print_warning(f"traces not saved: cannot open {tele.database()}: {exc}")
        else:
            try:
                sqlite_exporter.prune(tele.retention_days)
            except Exception as exc:  # a locked or damaged file: keep tracing, prune next time
                print_warning(f"old traces not pruned: {exc}")
            local = LeaveOut(leave_out.names, LOCAL_LEAVE_OUT)
            processors.append(
                BatchSpanProcessor(
                    RedactingExporter(sqlite_exporter, redactor, local),
                    schedule_delay_millis=schedule_delay_millis,
                )
            )
    target = otlp_target(tele)
    missing = extras.missing("otlp") if target else None
    if missing:
        print_warning(f"traces not sent to {target}: {missing}")
    elif target:
        from co_core.telemetry.otlp import otlp_processor

        try:
            processors.append(
                otlp_processor(
                    tele.otlp_endpoint,
                    target,
                    lambda exporter: RedactingExporter(exporter, redactor, leave_out),
                    print_warning,
                    schedule_delay_millis,
                )
            )
        except Exception as exc:
            print_warning(f"traces not sent to the OpenTelemetry collector: {exc}")
    if not processors:
        return None
    from importlib.metadata import version

    provider = TracerProvider(
        resource=Resource.create({"service.name": "co", "service.version": version("co-core")})
    )
    for processor in processors:
        provider.add_span_processor(processor)
    _current["provider"] = provider
    spans.activate(provider.get_tracer("co"), content)
    return provider


def current_provider() -> Any:
    return _current["provider"]


def flush(timeout_millis: int = 5000) -> bool:
    """Write out every finished span now (``co traces`` right after a turn sees it)."""
    provider = _current["provider"]
    return provider.force_flush(timeout_millis) if provider is not None else True


def shutdown_tracing() -> None:
    """Flush and stop the current provider; Co's spans become no-ops again."""
    provider = _current["provider"]
    _current["provider"] = None
    spans.activate(None, False)
    if provider is not None:
        provider.shutdown()


def record_plugin_loads(app_or_host: Any) -> int:
    """Trace how long each plugin took to import (loading happens before tracing starts).

    One ``co.startup`` span covers the loads, with a ``co.plugin.load`` span per plugin,
    back-dated to the recorded times. Returns how many plugins were recorded.
    """
    tracer = spans._state["tracer"]
    if tracer is None:
        return 0
    from opentelemetry.trace import Status, StatusCode, set_span_in_context

    host = getattr(app_or_host, "host", app_or_host)
    loaded = [info for info in host.listed() if info.load_ns is not None]
    if not loaded:
        return 0
    start = min(info.load_ns[0] for info in loaded)
    end = max(info.load_ns[1] for info in loaded)
    startup = tracer.start_span(
        "co.startup", start_time=start, attributes=spans.attributes({"plugins": len(loaded)})
    )
    context = set_span_in_context(startup)
    for info in loaded:
        attrs = spans.attributes(
            {"plugin": info.name, "version": info.version or "", "status": info.status}
        )
        traced = tracer.start_span(
            "co.plugin.load", context=context, start_time=info.load_ns[0], attributes=attrs
        )
        if info.status == "failed":
            traced.set_status(Status(StatusCode.ERROR, info.error or "failed"))
        traced.end(end_time=info.load_ns[1])
    startup.end(end_time=end)
    return len(loaded)


def capabilities() -> list[Any]:
    """``Agent(..., capabilities=telemetry.capabilities())``: Co's spans for an agent (its
    runs, model requests and tool calls); empty when tracing is off."""
    provider = _current["provider"]
    if provider is None or spans._state["tracer"] is None:
        return []
    from co_core.telemetry.agent_spans import instrumentation

    return [instrumentation(provider, spans.include_content())]
