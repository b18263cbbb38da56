"""A collector that accepts connections and never answers costs Co at most the export
timeout when it exits, and loses nothing of the local trace database."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from collector_fakes import Silent
from helpers import span_rows
from openai_server import Server

from co_core import telemetry
from co_core.testing import make_app

CO = str(Path(sys.executable).parent / "co")
WARNING = "co: warning: traces could not be sent to the OpenTelemetry collector at "


@pytest.fixture
def silent() -> Iterator[Silent]:
    collector = Silent()
    yield collector
    collector.close()


def _bounded(provider: Any) -> Any:
    from co_core.telemetry.otlp import BoundedProcessor

    processors = provider._active_span_processor._span_processors
    (bounded,) = [p for p in processors if isinstance(p, BoundedProcessor)]
    return bounded


def _otlp_exporter(bounded: Any) -> Any:
    redacting = bounded.inner.span_exporter
    return redacting.inner.inner  # RedactingExporter -> ReportingExporter -> OTLP


@pytest.mark.parametrize(("env", "seconds"), [(None, 5.0), ("2", 2.0), ("bogus", 5.0)])
def test_exit_waits_for_the_collector_at_most_the_export_timeout(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch, env: str | None, seconds: float
) -> None:
    if env is not None:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", env)
    settings = make_app({"telemetry": {"otlp_endpoint": "http://127.0.0.1:9"}}).settings
    provider = telemetry.setup_tracing(settings)
    try:
        bounded = _bounded(provider)
        # one export gives up after `seconds`; flush and shutdown wait that long in all,
        # however many batches are left (the SDK's own would export each, then again)
        assert bounded.seconds == seconds
        assert _otlp_exporter(bounded)._client._timeout == seconds
    finally:
        telemetry.shutdown_tracing()


def test_a_silent_collector_neither_blocks_flush_nor_loses_local_traces(
    co_dirs: Path,
    silent: Silent,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    settings = make_app({"telemetry": {"otlp_endpoint": silent.url}}).settings
    telemetry.setup_tracing(settings)
    for n in range(3):
        with telemetry.span("co.index.build", notes=n):
            pass
    # returns though the collector takes nothing (True or False: the bound and the export's
    # own timeout are the same second, so which ends first is the machine's business) ...
    telemetry.flush()
    rows = span_rows(co_dirs.parent / "co-data" / "traces.db")
    assert [r["attrs"]["co.notes"] for r in rows] == [0, 1, 2]  # ... the database did
    telemetry.shutdown_tracing()  # returns: the collector is given up on
    assert silent.accepted  # it was really asked
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(WARNING + silent.url + "/v1/traces")


def test_co_ask_ends_with_a_silent_collector_and_says_so_once(
    testplug: Path, silent: Silent
) -> None:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if body["messages"][-1]["role"] == "tool":
            return {"text": "sum is " + body["messages"][-1]["content"]}
        return {"tool": "add_numbers", "args": {"a": 2, "b": 3}}

    with Server(answer) as server:
        args = ["ask", "-m", "openai-compatible:tiny", "--base-url", server.base_url, "add"]
        env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": silent.url}
        done = subprocess.run([CO, *args], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "sum is 5"
    warnings = [line for line in done.stderr.splitlines() if line.startswith("co: warning")]
    assert len(warnings) == 1 and warnings[0].startswith(WARNING + silent.url + "/v1/traces")
    assert "Traceback" not in done.stderr
    rows = span_rows(testplug.parent / "co-data" / "traces.db")
    assert [r["name"] for r in rows].count("co.turn") == 1  # the local traces are complete
    assert silent.accepted


def test_without_the_otlp_exporter_installed_it_is_one_line_and_sqlite_goes_on(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # as if co-core were installed without its otlp extra
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http", None)
    settings = make_app({"telemetry": {"otlp_endpoint": "http://127.0.0.1:9"}}).settings
    assert telemetry.setup_tracing(settings) is not None
    try:
        with telemetry.span("co.index.build"):
            pass
    finally:
        telemetry.shutdown_tracing()
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        "co: warning: traces not sent to http://127.0.0.1:9/v1/traces: Sending traces to an "
        "OpenTelemetry collector needs co-core's 'otlp' extra, which is not installed: "
        'pip install "co-core[otlp]"'
    )
    rows = span_rows(co_dirs.parent / "co-data" / "traces.db")
    assert [r["name"] for r in rows] == ["co.index.build"]
