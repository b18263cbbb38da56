"""Observability: OpenTelemetry traces in SQLite (or any OTLP collector), Co's own spans.

This package's top level stays light (``co --help`` imports it through the settings);
opentelemetry-sdk and pydantic-ai load only when :func:`setup_tracing` or
:func:`capabilities` is called. See docs/observability.md.
"""

from __future__ import annotations

from typing import Any

from co_core.telemetry.spans import (
    NO_SPAN,
    client_span,
    include_content,
    span,
    tool_span,
    tracing,
)

__all__ = [
    "NO_SPAN",
    "capabilities",
    "client_span",
    "flush",
    "include_content",
    "record_plugin_loads",
    "setup_tracing",
    "shutdown_tracing",
    "span",
    "tool_span",
    "tracing",
    "turn",
]


def setup_tracing(settings: Any, **kw: Any) -> Any:
    from co_core.telemetry.setup import setup_tracing as _setup

    return _setup(settings, **kw)


def shutdown_tracing() -> None:
    from co_core.telemetry.setup import shutdown_tracing as _shutdown

    _shutdown()


def flush(timeout_millis: int = 5000) -> bool:
    from co_core.telemetry.setup import flush as _flush

    return _flush(timeout_millis)


def capabilities() -> list[Any]:
    """Co's spans as pydantic-ai capabilities, for an agent Co did not build: pydantic-ai's
    own instrumentation, held to Co's content rule (empty while tracing is off)."""
    from co_core.telemetry.setup import capabilities as _capabilities

    return _capabilities()


def record_plugin_loads(app_or_host: Any) -> int:
    from co_core.telemetry.setup import record_plugin_loads as _record

    return _record(app_or_host)


def turn(session_id: str, *, model: str | None = None, prompt: str | None = None) -> Any:
    """The root span of one user turn; ``.set(...)`` it with usage when the turn ends."""
    return span(
        "co.turn",
        content={"prompt": prompt} if prompt else None,
        session_id=session_id,
        model=model or "",
    )
