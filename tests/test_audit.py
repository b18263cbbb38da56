"""The audit trail: one redacted JSONL file per session, pruned after N days."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

from policy_support import build_app, call

from co_core import audit
from co_core.policy import PolicyEngine

SECRETS = {
    "openai": "sk-proj-Zx81kQ2mN4pL7vR9tY3wE6uI0oPa",
    "slack": "xoxb-2718281828-3141592653-AbCdEfGhIjKlMnOp",
    "aws": "AKIAIOSFODNN7EXAMPLQ",
    "github": "ghp_" + "R4nd0mT0k3nV4lu3" * 3,
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXZhbHVl",
    "pem": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----",
    "password": "correct-horse-battery-staple",
    "settings": "plain-looking-but-configured-secret-42",
    "url": "s3cr3tPassw0rdInUrl",
}


def _engine(tmp_path: Path, settings_secret: str | None = None, **options) -> PolicyEngine:
    app = build_app(tmp_path)
    if settings_secret:
        from co_core.testing import make_app

        app = make_app({"api_key": settings_secret}, cwd=tmp_path)
        from policy_support import ToolsPlugin

        app.host.register(ToolsPlugin(), "fake")
    return PolicyEngine.from_app(app, workspace=tmp_path, session_id="s-1", **options)


def test_every_decision_answer_and_execution_is_a_line(co_dirs: Path, tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    the_call = call(engine, "write_file", path="notes.md", text="hello")
    decision = engine.decide(the_call, call_id="c1")
    engine.record_answer(decision, True, scope="session", call_id="c1")
    engine.audit.execution(
        tool="write_file",
        plugin="fake",
        key=the_call.permission_key,
        status="ok",
        duration=0.0123,
        call_id="c1",
    )
    path = Path(os.environ["CO_DATA_DIR"]) / "audit" / "s-1.jsonl"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [e["event"] for e in lines] == ["decision", "answer", "execution"]
    first = lines[0]
    assert first["session"] == "s-1" and first["tool"] == "write_file" and first["plugin"] == "fake"
    assert (first["permission"], first["effect"], first["source"]) == (
        "fs:write:notes.md",
        "ask",
        "default",
    )
    assert first["arguments"] == {"path": "notes.md", "text": "hello"}
    assert lines[1]["effect"] == "allow" and lines[1]["scope"] == "session"
    assert lines[2]["status"] == "ok" and lines[2]["duration_ms"] == 12.3


def _logged(path: Path) -> list[tuple[str, str]]:
    if not path.exists():
        return []
    return [(e["event"], e["call_id"]) for e in map(json.loads, path.read_text().splitlines())]


def test_a_call_that_changes_something_is_in_the_file_before_it_runs(
    co_dirs: Path, tmp_path: Path
) -> None:
    """Reads may be written together on the event loop's next pass; a write, send or exec
    decision is in the file when decide() returns, after every line before it."""
    engine = _engine(tmp_path)
    path = Path(os.environ["CO_DATA_DIR"]) / "audit" / "s-1.jsonl"

    async def turn() -> tuple[list, list, list]:
        engine.decide(call(engine, "read_file", path="a.md"), call_id="r1")
        engine.decide(call(engine, "write_file", path="b.md"), call_id="w1")
        at_write = _logged(path)
        engine.decide(call(engine, "read_file", path="c.md"), call_id="r2")
        engine.record_execution(call(engine, "read_file", path="c.md"), status="ok",
                                duration=0.001, call_id="r2")  # fmt: skip
        await asyncio.sleep(0)  # the loop's next pass
        next_pass = _logged(path)
        engine.decide(call(engine, "run_shell", cmd="ls"), call_id="x1")
        return at_write, next_pass, _logged(path)

    at_write, next_pass, last = asyncio.run(turn())
    assert at_write == [("decision", "r1"), ("decision", "w1")]
    assert next_pass == [*at_write, ("decision", "r2"), ("execution", "r2")]
    assert last == [*next_pass, ("decision", "x1")]


def test_lines_waiting_for_the_loop_are_written_when_the_log_closes(
    co_dirs: Path, tmp_path: Path
) -> None:
    engine = _engine(tmp_path)
    path = Path(os.environ["CO_DATA_DIR"]) / "audit" / "s-1.jsonl"

    async def interrupted() -> list:  # closed before the loop gets another pass
        engine.decide(call(engine, "read_file", path="a.md"), call_id="r1")
        engine.audit.close()
        return _logged(path)

    assert asyncio.run(interrupted()) == [("decision", "r1")]


def test_secrets_never_reach_the_audit_file(co_dirs: Path, tmp_path: Path) -> None:
    engine = _engine(tmp_path, settings_secret=SECRETS["settings"])
    s = SECRETS
    calls = [
        call(
            engine,
            "run_shell",
            cmd=f"curl -H 'Authorization: Bearer {s['bearer']}' https://api.example",
        ),
        call(engine, "run_shell", cmd=f"OPENAI_API_KEY={s['openai']} python app.py"),
        call(engine, "run_shell", cmd=f"git clone https://bob:{s['url']}@git.example/repo"),
        call(engine, "run_shell", cmd=f"echo {s['settings']} | mysql --password {s['password']}"),
        call(engine, "write_file", path="key.pem", text=s["pem"]),
        call(engine, "write_file", path="cfg.json", api_token=s["slack"], text=f"aws={s['aws']}"),
        call(engine, "post_message", channel="#ops", text=f"token is {s['github']}"),
        call(engine, "mystery", thing="x", credentials={"password": s["password"]}),
    ]
    for number, the_call in enumerate(calls):
        decision = engine.decide(the_call, call_id=str(number))
        engine.record_answer(decision, False, reason=f"no, that leaks {s['slack']}")
    engine.audit.execution(
        tool="run_shell",
        plugin="fake",
        key=calls[0].permission_key,
        status="error",
        duration=1.0,
        error=f"401 for Bearer {s['bearer']} (key {s['openai']})",
    )
    data = audit.audit_file("s-1").read_bytes()
    assert data.count(b"\n") == 2 * len(calls) + 1
    for name, secret in SECRETS.items():
        for piece in secret.splitlines():
            assert piece.encode() not in data, name
    assert b"[REDACTED]" in data
    assert b"curl -H" in data and b"#ops" in data  # the rest is still readable


def test_old_audit_files_are_pruned(co_dirs: Path, tmp_path: Path) -> None:
    folder = audit.audit_dir()
    folder.mkdir(parents=True)
    old, recent = folder / "old.jsonl", folder / "recent.jsonl"
    old.write_text("{}\n"), recent.write_text("{}\n")
    forty_days_ago = time.time() - 40 * 86400
    os.utime(old, (forty_days_ago, forty_days_ago))
    ten_days_ago = time.time() - 10 * 86400
    os.utime(recent, (ten_days_ago, ten_days_ago))
    audit.AuditLog("new", days=30)
    assert not old.exists() and recent.exists()
    app = build_app(tmp_path)
    from co_core.testing import write_settings

    write_settings({"policy": {"audit_days": 5}}, co_dirs)
    from co_core.testing import make_app

    PolicyEngine.from_app(make_app(cwd=tmp_path), workspace=tmp_path, session_id="x")
    assert not recent.exists()
    assert app is not None


def test_session_ids_cannot_escape_the_audit_folder(co_dirs: Path) -> None:
    log = audit.AuditLog("../../etc/passwd")
    log.write("decision", {"tool": "t"})
    assert log.path.parent == audit.audit_dir()
    assert list(audit.audit_dir().iterdir()) == [log.path]


def test_shell_parts_and_approved_keys_are_readable_in_the_audit(
    co_dirs: Path, tmp_path: Path
) -> None:
    engine = _engine(tmp_path)
    the_call = engine.make_call("run_shell", {"cmd": "make build && make install"})
    decision = engine.decide(the_call, call_id="c9")
    engine.record_answer(decision, True, scope="project", call_id="c9")
    engine.record_execution(the_call, status="error", duration=2.0, error="exit 2", call_id="c9")
    lines = [json.loads(line) for line in audit.audit_file("s-1").read_text().splitlines()]
    assert [p["permission"] for p in lines[0]["parts"]] == [
        "shell:exec:make build",
        "shell:exec:make install",
    ]
    assert lines[1]["approved"] == ["shell:exec:make build", "shell:exec:make install"]
    assert (lines[2]["status"], lines[2]["error"], lines[2]["duration_ms"]) == (
        "error",
        "exit 2",
        2000.0,
    )


def test_lines_keep_coming_after_the_file_is_pruned_mid_session(co_dirs: Path) -> None:
    log = audit.AuditLog("long-session")
    log.write("decision", {"tool": "first"})
    # the session sat idle for longer than the recheck interval, and meanwhile another Co
    # pruned the file (only a file not written to for a day can be pruned)
    log.recheck_after = 0
    log.path.unlink()
    log.write("decision", {"tool": "second"})
    log.close()
    log.write("execution", {"tool": "third"})  # after close: reopened, nothing lost
    tools = [json.loads(line)["tool"] for line in log.path.read_text().splitlines()]
    assert tools == ["second", "third"]
    assert oct(log.path.stat().st_mode & 0o777) == "0o600"
