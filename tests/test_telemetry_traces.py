"""Traces of a scripted run land in a real SQLite file (and an OTLP receiver), as a tree,
with secrets masked and content kept out unless the user opted in."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from helpers import span_rows
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_core import telemetry
from co_core.telemetry import store
from co_core.testing import make_app

SECRET_KEY = "sk-ant-api03-PLANTEDsecretVALUE0123456789abcd"
SETTINGS_SECRET = "hunter2-settings-secret-9f8e7d"
PROMPT_MARK = "PROMPT-MARKER-please-summarise"
OUTPUT_MARK = "TOOL-OUTPUT-MARKER-42"


def _script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    calls = sum(isinstance(p, ToolCallPart) for m in messages for p in getattr(m, "parts", []))
    if calls == 0:
        return ModelResponse(
            parts=[
                ToolCallPart("lookup", {"query": f"notes --api-key {SECRET_KEY}"}),
                ToolCallPart("flaky", {"n": 1}),
            ]
        )
    if calls == 2:
        return ModelResponse(parts=[ToolCallPart("flaky", {"n": 2})])
    return ModelResponse(parts=[TextPart("All done.")])


def build_agent() -> Agent:
    """A plain pydantic-ai agent with Co's spans (``co chat`` has them in CoHooks)."""
    model = FunctionModel(_script, model_name="scripted")
    agent = Agent(model, name="co", capabilities=telemetry.capabilities())

    @agent.tool_plain
    def lookup(query: str) -> str:
        """Look something up (runs Co's own traced work inside)."""
        with telemetry.span("co.sandbox.exec", backend="bubblewrap", content={"command": query}):
            pass
        return f"{OUTPUT_MARK} for {query} token={SETTINGS_SECRET}"

    @agent.tool_plain
    def flaky(n: int) -> str:
        """Fails the first time (ModelRetry), works the second."""
        if n == 1:
            raise ModelRetry("call me again with n=2")
        return "fine"

    return agent


def run_turn(settings: Any, *, include_content: bool | None = None) -> Any:
    telemetry.setup_tracing(settings, include_content=include_content)
    agent = build_agent()
    with telemetry.turn("session-1", model="function:scripted", prompt=PROMPT_MARK) as turn:
        result = agent.run_sync(PROMPT_MARK)
        turn.set(input_tokens=result.usage.input_tokens, output_tokens=result.usage.output_tokens)
    telemetry.flush()
    return result


@pytest.fixture
def traced(co_dirs: Path) -> Iterator[Path]:
    yield co_dirs.parent / "co-data" / "traces.db"
    telemetry.shutdown_tracing()


def db_bytes(db: Path) -> bytes:
    telemetry.shutdown_tracing()  # closes the connection: WAL checkpointed into the file
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))


def test_scripted_run_is_a_span_tree_in_sqlite(traced: Path) -> None:
    run_turn(make_app({"api_key": SETTINGS_SECRET}).settings)
    rows = span_rows(traced)
    by_id = {r["id"]: r for r in rows}
    names = [r["name"] for r in rows]
    assert len({r["trace_id"] for r in rows}) == 1, "one turn, one trace"

    (root,) = [r for r in rows if r["parent_id"] is None]
    assert root["name"] == "co.turn"
    assert root["attrs"]["co.session_id"] == "session-1"
    assert root["attrs"]["co.input_tokens"] > 0  # counts are not masked as "tokens"

    (run,) = [r for r in rows if r["name"] == "invoke_agent co"]
    assert run["parent_id"] == root["id"]
    chats = [r for r in rows if r["name"] == "chat scripted"]
    assert len(chats) == 3 and all(c["parent_id"] == run["id"] for c in chats)
    assert all(c["attrs"]["gen_ai.usage.input_tokens"] > 0 for c in chats)
    assert all(c["attrs"]["co.cost_usd"] == 0 for c in chats)  # a local model costs nothing

    tools = [r for r in rows if r["name"].startswith("execute_tool")]
    assert sorted(names.count(n) for n in {r["name"] for r in tools}) == [1, 2]
    assert all(t["parent_id"] == run["id"] for t in tools)
    (lookup,) = [t for t in tools if t["attrs"]["gen_ai.tool.name"] == "lookup"]
    (sandbox,) = [r for r in rows if r["name"] == "co.sandbox.exec"]
    assert sandbox["parent_id"] == lookup["id"]  # Co's own spans nest in the tool call
    assert sandbox["attrs"]["co.backend"] == "bubblewrap"
    assert "co.command" not in sandbox["attrs"]  # content kept out by default
    retried = [t for t in tools if t["attrs"]["gen_ai.tool.name"] == "flaky"]
    assert len(retried) == 2
    assert sorted(t["status"] for t in retried) == ["ERROR", "UNSET"]

    for r in rows:
        assert r["duration_ms"] >= 0 and r["start_time"] <= r["end_time"]
        assert by_id.get(r["parent_id"], root)["trace_id"] == r["trace_id"]
        assert json.loads(r["context"])["span_id"] == r["id"]


def test_a_call_with_invalid_arguments_is_a_failed_tool_span_that_ran_nothing(
    traced: Path,
) -> None:
    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:  # small local models often send garbage arguments
            return ModelResponse(parts=[ToolCallPart("count", {"n": "lots"})])
        return ModelResponse(parts=[TextPart("Sorry.")])

    ran: list[int] = []
    telemetry.setup_tracing(make_app({}).settings)
    model = FunctionModel(script, model_name="scripted")
    agent = Agent(model, name="co", capabilities=telemetry.capabilities())

    @agent.tool_plain
    def count(n: int) -> int:
        """Count to n."""
        ran.append(n)
        return n

    assert agent.run_sync("count").output == "Sorry."
    telemetry.flush()
    (tool,) = [r for r in span_rows(traced) if r["name"] == "execute_tool count"]
    assert ran == [] and tool["status"] == "ERROR"
    assert tool["attrs"]["pydantic_ai.tool.failure_stage"] == "validation"
    assert tool["attrs"]["pydantic_ai.tool.retry.cause"] == "validation_error"
    assert "lots" not in tool["attributes"] + tool["events"]  # the arguments are content


def test_database_is_wal_indexed_and_private(traced: Path) -> None:
    run_turn(make_app({}).settings)
    conn = sqlite3.connect(traced)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    indexes = {r[1] for r in conn.execute("PRAGMA index_list(spans)")}
    assert {"spans_start_time", "spans_name", "spans_trace_id", "spans_parent_id"} <= indexes
    conn.close()
    assert traced.stat().st_mode & 0o077 == 0


def test_secrets_never_reach_the_database_even_with_content(traced: Path) -> None:
    run_turn(make_app({"api_key": SETTINGS_SECRET}).settings, include_content=True)
    data = db_bytes(traced)
    assert OUTPUT_MARK.encode() in data  # content was recorded (opted in) ...
    assert b"[REDACTED]" in data
    assert SECRET_KEY.encode() not in data  # ... but never the secrets in it
    assert SETTINGS_SECRET.encode() not in data
    assert b"PLANTEDsecret" not in data


def test_content_is_not_recorded_unless_opted_in(traced: Path) -> None:
    run_turn(make_app({"api_key": SETTINGS_SECRET}).settings)
    data = db_bytes(traced)
    assert PROMPT_MARK.encode() not in data
    assert OUTPUT_MARK.encode() not in data
    assert b"notes --api-key" not in data


def test_content_setting_opts_in(traced: Path) -> None:
    run_turn(make_app({"telemetry": {"include_content": True}}).settings)
    data = db_bytes(traced)
    assert PROMPT_MARK.encode() in data and OUTPUT_MARK.encode() in data
    assert b"co.command" in data  # Co's own content attributes too


@pytest.mark.parametrize("content", [False, True])
def test_messages_are_kept_only_with_content(traced: Path, content: bool) -> None:
    # Without content, a model request's span carries neither the history (which would
    # grow with the square of a turn's length) nor the answer's shape (the tool spans
    # name the calls); the request's model, tokens and cost stay.
    run_turn(make_app({}).settings, include_content=content)
    requests = [r for r in span_rows(traced) if r["name"].startswith("chat ")]
    assert len(requests) >= 2
    for row in requests:
        assert ("gen_ai.input.messages" in row["attrs"]) is content
        assert ("gen_ai.output.messages" in row["attrs"]) is content
        assert row["attrs"]["gen_ai.usage.input_tokens"] > 0
        assert row["attrs"]["gen_ai.response.model"] == "scripted"
    if content:
        answer = json.loads(requests[0]["attrs"]["gen_ai.output.messages"])
        assert [p["name"] for p in answer[0]["parts"]] == ["lookup", "flaky"]
        assert PROMPT_MARK in requests[0]["attrs"]["gen_ai.input.messages"]


def test_tracing_off_writes_nothing_and_spans_are_no_ops(traced: Path) -> None:
    assert telemetry.setup_tracing(make_app({"telemetry": {"enabled": False}}).settings) is None
    assert telemetry.span("co.policy.decision", key="x") is telemetry.NO_SPAN
    agent = build_agent()
    assert agent.run_sync("hi").output == "All done."
    assert not traced.exists()


def test_unusable_database_is_a_warning_not_a_failure(
    traced: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traced.parent.mkdir(parents=True, exist_ok=True)
    traced.write_bytes(b"this is not a database, it is a text file " * 200)
    settings = make_app({}).settings
    assert telemetry.setup_tracing(settings) is None
    assert "traces not saved" in capsys.readouterr().err
    assert build_agent().run_sync("hi").output == "All done."
    assert traced.read_bytes().startswith(b"this is not a database")  # nothing lost


# -- migration ---------------------------------------------------------------------------

SEED_SCHEMA = """CREATE TABLE spans (
    id TEXT PRIMARY KEY, name TEXT, context TEXT, kind TEXT, start_time TEXT,
    end_time TEXT, attributes TEXT, events TEXT, status TEXT)"""


def test_old_database_is_migrated_never_dropped(traced: Path) -> None:
    traced.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(traced)
    conn.execute(SEED_SCHEMA)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.execute("INSERT INTO notes VALUES ('keep me')")
    conn.execute(
        "INSERT INTO spans VALUES ('00000000000000aa', 'old agent run', ?, 'INTERNAL', "
        "'2025-01-02T03:04:05.000000Z', '2025-01-02T03:04:06.500000Z', '{}', '[]', 'OK')",
        (json.dumps({"trace_id": "ab" * 16, "span_id": "00000000000000aa"}),),
    )
    conn.commit()
    conn.close()

    # a retention long enough that the old row is not pruned: migration itself drops nothing
    run_turn(make_app({"telemetry": {"retention_days": 36500}}).settings)
    rows = span_rows(traced)
    old = next(r for r in rows if r["id"] == "00000000000000aa")
    assert old["trace_id"] == "ab" * 16
    assert old["duration_ms"] == pytest.approx(1500, abs=1)
    assert any(r["name"] == "co.turn" for r in rows)
    conn = sqlite3.connect(traced)
    assert conn.execute("SELECT text FROM notes").fetchall() == [("keep me",)]
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION
    conn.close()


def test_migration_is_idempotent(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    conn = store.connect(db)
    assert store.migrate(conn) == []
    conn.close()
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE spans DROP COLUMN status_message")
    conn.close()
    conn = store.connect(db)
    assert {r[1] for r in conn.execute("PRAGMA table_info(spans)")} == set(store.COLUMNS)
    conn.close()


# -- OTLP --------------------------------------------------------------------------------


class Receiver:
    """A minimal OTLP/HTTP collector: decodes ExportTraceServiceRequest protobufs."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        self.spans: list[Any] = []
        self.paths: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.paths.append(self.path)
                for rs in request.resource_spans:
                    for ss in rs.scope_spans:
                        receiver.spans.extend(ss.spans)
                payload = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def _attr(span: Any, key: str) -> Any:
    for kv in span.attributes:
        if kv.key == key:
            return kv.value.string_value or kv.value.int_value
    return None


def test_otlp_setting_sends_spans_instead_of_sqlite(traced: Path, receiver: Receiver) -> None:
    settings = make_app(
        {"api_key": SETTINGS_SECRET, "telemetry": {"sqlite": False, "otlp_endpoint": receiver.url}}
    ).settings
    run_turn(settings, include_content=True)
    names = [s.name for s in receiver.spans]
    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}
    assert "co.turn" in names and "invoke_agent co" in names and "co.sandbox.exec" in names
    assert names.count("execute_tool flaky") == 2
    tool = next(s for s in receiver.spans if s.name == "execute_tool lookup")
    run = next(s for s in receiver.spans if s.name == "invoke_agent co")
    assert tool.parent_span_id == run.span_id and tool.trace_id == run.trace_id
    assert _attr(tool, "gen_ai.tool.name") == "lookup"
    everything = b"".join(s.SerializeToString() for s in receiver.spans)
    assert OUTPUT_MARK.encode() in everything  # content opted in ...
    assert SECRET_KEY.encode() not in everything and SETTINGS_SECRET.encode() not in everything
    assert not traced.exists()  # "instead of" SQLite


def test_standard_otlp_variable_sends_as_well_as_sqlite(
    traced: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    run_turn(make_app({}).settings)
    sent = sorted(s.name for s in receiver.spans)
    stored = sorted(r["name"] for r in span_rows(traced))
    assert sent == stored and "co.turn" in sent


# -- Co's own spans ----------------------------------------------------------------------


def test_plugin_loading_is_traced(traced: Path) -> None:
    app = make_app({})
    telemetry.setup_tracing(app.settings)
    assert telemetry.record_plugin_loads(app) >= 4
    telemetry.flush()
    rows = span_rows(traced)
    (startup,) = [r for r in rows if r["name"] == "co.startup"]
    loads = [r for r in rows if r["name"] == "co.plugin.load"]
    assert {r["attrs"]["co.plugin"] for r in loads} >= {"shell", "obsidian", "google", "slack"}
    assert all(
        r["parent_id"] == startup["id"] and r["attrs"]["co.status"] == "loaded" for r in loads
    )
    assert startup["parent_id"] is None and startup["attrs"]["co.plugins"] == len(loads)
    assert all(
        startup["start_time"] <= r["start_time"] <= r["end_time"] <= startup["end_time"]
        for r in loads
    )


def test_approvals_are_traced_and_their_key_only_with_content(
    traced: Path, testplug: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from helpers import Asking, session_with, turn

    monkeypatch.chdir(testplug.parent)  # the note is written in the test's own folder

    from co_core.agent.frontend import Answer

    def script(messages: list[Any], info: Any) -> ModelResponse:
        if not any(m.kind == "response" for m in messages):
            args = {"name": "git.md", "text": "x"}
            return ModelResponse(parts=[ToolCallPart("write_note", args)])
        return ModelResponse(parts=[TextPart("done")])

    for content in (False, True):
        yes = Asking(lambda record: Answer(True, scope="session"))
        chat = session_with(script, frontend=yes, trace_content=content)
        try:
            turn(chat, "note it")
            telemetry.flush()
        finally:
            chat.close()
        (answer,) = [r for r in span_rows(traced) if r["name"] == "co.approval"]
        assert answer["attrs"]["co.approved"] is True and answer["attrs"]["co.scope"] == "session"
        # the permission key holds the path: content, left out unless opted in
        assert ("git.md" in answer["attributes"]) is content
        traced.unlink()


def test_failing_work_is_marked_failed_without_its_message_unless_content(traced: Path) -> None:
    for content in (False, True):
        telemetry.setup_tracing(make_app({}).settings, include_content=content)
        with pytest.raises(RuntimeError):
            with telemetry.span("co.index.build", notes=3):
                raise RuntimeError(f"cannot parse {OUTPUT_MARK}")
        telemetry.flush()
    first, second = [r for r in span_rows(traced) if r["name"] == "co.index.build"]
    assert first["status"] == second["status"] == "ERROR"
    assert first["status_message"] == "RuntimeError"
    assert OUTPUT_MARK not in first["events"] and "RuntimeError" in first["events"]
    assert second["status_message"] == f"RuntimeError: cannot parse {OUTPUT_MARK}"
    assert first["attrs"]["co.notes"] == 3


def test_span_redactor_masks_json_and_text_alike() -> None:
    from co_core.kernel.redact import Redactor
    from co_core.telemetry.redacting import SpanRedactor

    r = SpanRedactor(Redactor([SETTINGS_SECRET]))
    messages = json.dumps(
        [
            {"role": "user", "parts": [{"content": f"my key is {SECRET_KEY}"}]},
            {"role": "tool", "args": {"api_key": "plain-value-123", "max_tokens": 50}},
            {"role": "assistant", "parts": [{"content": "x" * 80}]},
        ],
        indent=1,
    )
    for _ in range(2):  # the same result every time
        masked = json.loads(r.value(messages, "gen_ai.input.messages"))
        assert masked[0]["parts"][0]["content"] == "my key is [REDACTED]"
        assert masked[1]["args"] == {"api_key": "[REDACTED]", "max_tokens": 50}
        assert masked[2]["parts"][0]["content"] == "x" * 80
    log = "[INFO] connecting with password=swordfish-12 to " + SETTINGS_SECRET + " " * 40
    assert (
        r.value(log, "co.output")
        == "[INFO] connecting with password=[REDACTED] to [REDACTED]" + " " * 40
    )
    assert r.value({"token": "abc"}, "co.x") == {"token": "[REDACTED]"}
    assert r.value(12, "gen_ai.usage.input_tokens") == 12


def test_collector_down_is_one_warning_and_sqlite_still_written(
    traced: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: connections are refused
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    for _ in range(2):
        result = run_turn(make_app({}).settings)
        assert result.output == "All done."
    err = capsys.readouterr().err
    warning = (
        "co: warning: traces could not be sent to the OpenTelemetry collector at "
        f"http://127.0.0.1:{port}/v1/traces"
    )
    assert err.splitlines() == [warning, warning]  # once per session (setup_tracing), not per batch
    assert "Traceback" not in err and "Transient error" not in err
    assert sum(r["name"] == "co.turn" for r in span_rows(traced)) == 2
