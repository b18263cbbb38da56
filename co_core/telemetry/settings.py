"""The ``telemetry`` settings section: where traces go and what they may contain."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from co_core.kernel import paths
from co_core.kernel.settings import SectionModel, setting


class TelemetrySettings(SectionModel):
    enabled: bool = setting(
        True, env="CO_TELEMETRY", help="record traces of turns, model requests and tool calls"
    )
    sqlite: bool = setting(
        True, env="CO_TELEMETRY_SQLITE", help="write traces to the local SQLite database"
    )
    sqlite_path: str | None = setting(
        None, env="CO_TRACES_DB", help="trace database (default: <data dir>/traces.db)"
    )
    otlp: bool = setting(
        False,
        env="CO_TELEMETRY_OTLP",
        help="also send traces to an OpenTelemetry collector (on by itself when OTEL_EXPORTER_OTLP_ENDPOINT is set)",
    )
    otlp_endpoint: str | None = setting(
        None,
        env="CO_OTLP_ENDPOINT",
        help="collector base URL, e.g. http://localhost:4318 (default: OTEL_EXPORTER_OTLP_* variables)",
    )
    include_content: bool = setting(
        False,
        env="CO_TRACE_CONTENT",
        help="record prompts, answers, tool arguments and tool output in traces (secrets are masked either way)",
    )

    retention_days: int = setting(
        30,
        env="CO_TRACES_DAYS",
        ge=1,
        help="days a span is kept in the trace database before it is pruned",
    )

    def database(self) -> Path:
        """The SQLite file traces are written to."""
        if self.sqlite_path:
            return Path(self.sqlite_path).expanduser()
        return paths.data_dir() / "traces.db"


OTLP_ENV = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def telemetry_section(settings: Any) -> TelemetrySettings:
    """The telemetry section from Co's Settings (or the section itself, or defaults)."""
    if isinstance(settings, TelemetrySettings):
        return settings
    if settings is None:
        return TelemetrySettings()
    try:
        section: TelemetrySettings = settings.section(TelemetrySettings)
        return section
    except KeyError:
        return TelemetrySettings()


def otlp_target(tele: TelemetrySettings) -> str | None:
    """Where OTLP export goes, or None when it is off."""
    if tele.otlp_endpoint:
        return tele.otlp_endpoint.rstrip("/") + "/v1/traces"
    for name in OTLP_ENV:
        if os.environ.get(name):
            return (
                os.environ[name]
                if "TRACES" in name
                else os.environ[name].rstrip("/") + "/v1/traces"
            )
    if tele.otlp:
        return "http://localhost:4318/v1/traces"
    return None
