"""The ``telemetry`` settings section: where traces go and what they may contain."""

from __future__ import annotations

from pathlib import Path

from co_core import paths
from co_core.settings import SectionModel, setting


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

    def database(self) -> Path:
        """The SQLite file traces are written to."""
        if self.sqlite_path:
            return Path(self.sqlite_path).expanduser()
        return paths.data_dir() / "traces.db"
