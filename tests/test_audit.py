"""The audit trail: one redacted JSONL line per decision, answer and execution, per session.

Driven at the turn level: a scripted model calls real tools through Co's agent and policy,
and the tests read the file a user would read.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelRetry, RunContext, ToolFailed

from co_core import CoDeps, hookimpl
from co_core.policy import PolicyEngine, audit
from co_core.testing import audit_entries, make_app, run_turn, script_calls, use_plugin

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
SEEN_AT_RUN: list[list[tuple[str, str]]] = []  # the audit lines each tool found when it ran


def _lines_now(ctx: RunContext[CoDeps]) -> None:
    SEEN_AT_RUN.append([(e["event"], e["call_id"]) for e in audit_entries(ctx.deps.session_id)])


def write_note(ctx: RunContext[CoDeps], path: str, text: str) -> str:
    """Write a note."""
    _lines_now(ctx)
    (ctx.deps.workspace / path).write_text(text)
    return "written"


def read_note(ctx: RunContext[CoDeps], path: str) -> str:
    """Read a note."""
    _lines_now(ctx)
    return (ctx.deps.workspace / path).read_text()


def run_shell(ctx: RunContext[CoDeps], cmd: str) -> str:
    """Run a command (pretend): "fail" fails, "broken" crashes, "again" asks for a retry."""
    if "again" in cmd:
        raise ModelRetry(f"exit 2; try without 'again' ({cmd})")
    if "fail" in cmd:
        raise ToolFailed(f"exit 1: {cmd}")
    if "broken" in cmd:
        raise RuntimeError(f"the tool broke on {cmd}")
    return f"ran {cmd}"


class Tools:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(write_note, risk="write", permission="fs:write:{path}")
        register(read_note, risk="read", permission="fs:read:{path}")
        register(run_shell, risk="exec", permission="shell:exec:{cmd}")


def lines(session: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in audit.audit_file(session).read_text().splitlines()]


def test_every_decision_answer_and_execution_is_a_line(co_dirs: Path, tmp_path: Path) -> None:
    script = script_calls(("write_note", {"path": "notes.md", "text": "hello"}))
    with use_plugin(Tools(), cwd=tmp_path) as app:
        turn = run_turn(app, "write it", script, approvals=True)
    path = audit.audit_file(turn.session_id)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    found = lines(turn.session_id)
    assert [e["event"] for e in found] == ["decision", "answer", "execution"]
    first = found[0]
    assert first["session"] == turn.session_id and first["tool"] == "write_note"
    assert (first["permission"], first["effect"], first["source"]) == (
        "fs:write:notes.md",
        "ask",
        "default",
    )
    assert first["arguments"] == {"path": "notes.md", "text": "hello"}
    assert found[1]["effect"] == "allow" and found[1]["source"] == "user"
    assert found[2]["status"] == "ok" and found[2]["duration_ms"] >= 0
    assert len({e["call_id"] for e in found}) == 1  # one call, three lines about it


def test_a_call_is_in_the_file_before_it_runs(co_dirs: Path, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("A")
    SEEN_AT_RUN.clear()
    script = script_calls(
        ("read_note", {"path": "a.md"}), ("write_note", {"path": "b.md", "text": "B"})
    )
    with use_plugin(Tools(), cwd=tmp_path) as app:
        turn = run_turn(app, "go", script, approvals=True)
    read_id, write_id = [e["call_id"] for e in turn.audit("decision")]
    assert SEEN_AT_RUN[0] == [("decision", read_id)]
    assert SEEN_AT_RUN[1] == [
        ("decision", read_id),
        ("execution", read_id),
        ("decision", write_id),
        ("answer", write_id),
    ]


@pytest.mark.parametrize(
    "args, status",
    [
        ({"cmd": "make again"}, "retry"),  # ModelRetry: the model must fix its call
        ({"cmd": "make fail"}, "error"),  # ToolFailed: a failure the model sees
        ({"command": "make"}, "retry"),  # arguments that do not validate
    ],
)
def test_failing_calls_write_an_execution_line(
    co_dirs: Path, tmp_path: Path, args: dict[str, str], status: str
) -> None:
    script = script_calls(("run_shell", args), answer="gave up")
    with use_plugin(Tools(), cwd=tmp_path) as app:
        turn = run_turn(app, "build it", script, approvals=True)
    executions = turn.audit("execution")
    assert [e["status"] for e in executions] == [status]
    assert executions[0]["error"] and executions[0]["tool"] == "run_shell"
    assert [c["status"] for c in turn.calls] == [status]


def test_a_tool_that_crashes_ends_the_turn_and_still_writes_its_line(
    co_dirs: Path, tmp_path: Path
) -> None:
    with use_plugin(Tools(), cwd=tmp_path) as app:
        with pytest.raises(RuntimeError, match="the tool broke"):
            run_turn(app, "go", script_calls(("run_shell", {"cmd": "broken"})), approvals=True)
    executions = [e for e in audit_entries(event="execution")]
    assert [(e["status"], e["error"]) for e in executions] == [
        ("error", "the tool broke on broken")
    ]


def test_secrets_never_reach_the_audit_file(co_dirs: Path, tmp_path: Path) -> None:
    s = SECRETS
    calls = [
        (
            "run_shell",
            {"cmd": f"curl -H 'Authorization: Bearer {s['bearer']}' https://api.example"},
        ),
        ("run_shell", {"cmd": f"OPENAI_API_KEY={s['openai']} python app.py"}),
        ("run_shell", {"cmd": f"git clone https://bob:{s['url']}@git.example/repo"}),
        ("run_shell", {"cmd": f"echo {s['settings']} | mysql --password {s['password']}"}),
        ("write_note", {"path": "key.pem", "text": s["pem"]}),
        ("write_note", {"path": "cfg.json", "text": f"aws={s['aws']} slack={s['slack']}"}),
        ("run_shell", {"cmd": f"again with token {s['github']}"}),
    ]
    with use_plugin(Tools(), cwd=tmp_path, settings={"api_key": s["settings"]}) as app:
        desk = {"run_shell": True, "write_note": False}
        turn = run_turn(app, "go", script_calls(*calls), approvals=desk)
    data = audit.audit_file(turn.session_id).read_bytes()
    assert data.count(b'"event": "decision"') == len(calls)
    for name, secret in SECRETS.items():
        for piece in secret.splitlines():
            assert piece.encode() not in data, name
    assert b"[REDACTED]" in data
    assert b"curl -H" in data and b"key.pem" in data  # the rest is still readable


def test_shell_parts_and_approved_keys_are_readable_in_the_audit(
    co_dirs: Path, tmp_path: Path
) -> None:
    script = script_calls(("run_shell", {"cmd": "make build && make fail"}))
    with use_plugin(Tools(), cwd=tmp_path) as app:
        turn = run_turn(app, "go", script, approvals=True)
    decision, answer, execution = lines(turn.session_id)
    assert [p["permission"] for p in decision["parts"]] == [
        "shell:exec:make build",
        "shell:exec:make fail",
    ]
    assert answer["approved"] == ["shell:exec:make build", "shell:exec:make fail"]
    assert (execution["status"], execution["error"]) == ("error", "exit 1: make build && make fail")


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
    app = make_app({"policy": {"audit_days": 5}}, cwd=tmp_path)
    PolicyEngine.from_app(app, workspace=tmp_path, session_id="x")
    assert not recent.exists()


def test_session_ids_cannot_escape_the_audit_folder(co_dirs: Path) -> None:
    log = audit.AuditLog("../../etc/passwd")
    log.write("decision", {"tool": "t"})
    assert log.path.parent == audit.audit_dir()
    assert list(audit.audit_dir().iterdir()) == [log.path]


def test_lines_keep_coming_after_the_file_is_pruned_mid_session(co_dirs: Path) -> None:
    log = audit.AuditLog("long-session")
    log.write("decision", {"tool": "first"})
    log.path.unlink()  # another Co pruned it (only files idle for a day can be pruned)
    log.write("decision", {"tool": "second"})
    tools = [json.loads(line)["tool"] for line in log.path.read_text().splitlines()]
    assert tools == ["second"]
    assert oct(log.path.stat().st_mode & 0o777) == "0o600"
