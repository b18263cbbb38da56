"""MCP servers as Co tool sources: real servers over stdio, a scripted model, the real policy.

Servers: the test server in mcp_test_server.py (written with the ``mcp`` SDK) and the
published reference server ``mcp-server-time`` from PyPI.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp_support import (
    app_with,
    audit_lines,
    http_server,
    run_turn,
    sdk_server,
    time_server,
)

from co_core.kernel import paths, trust


def test_time_server_tools_are_listed_and_called_when_a_rule_allows(
    co_dirs: Path, tmp_path: Path
) -> None:
    app = app_with(
        {"time": time_server()},
        cwd=tmp_path,
        rules=[{"match": "mcp:time:*", "effect": "allow"}],
    )
    turn = run_turn(app, tmp_path, [("time_get_current_time", {"timezone": "Asia/Tokyo"})])
    mcp = [name for name in turn.tools_seen if name.startswith("time_")]  # besides Co's own
    assert mcp == ["time_convert_time", "time_get_current_time"]
    assert "Asia/Tokyo" in turn.results[0] and "day_of_week" in turn.results[0]
    assert turn.output.startswith("results: ") and "Asia/Tokyo" in turn.output
    decision = [e for e in audit_lines(paths.data_dir()) if e["event"] == "decision"][0]
    assert decision["permission"] == "mcp:time:get_current_time"
    assert (decision["effect"], decision["source"]) == ("allow", "user")
    assert decision["plugin"] == "mcp:time"


def test_by_default_an_mcp_tool_asks_so_without_a_terminal_it_is_denied(
    co_dirs: Path, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    app = app_with({"t": sdk_server(env={"NOTE_FILE": str(notes)})}, cwd=tmp_path)
    turn = run_turn(app, tmp_path, [("t_write_note", {"text": "pwned"})])
    assert not notes.exists()  # the server never saw the call
    assert "needs approval" in turn.results[0]
    assert "--approve mcp:t:write_note" in turn.results[0]
    decision = turn.decisions["call0"]
    assert (decision.effect, decision.source, decision.asked_by) == ("deny", "headless", "default")


def test_asking_the_user_yes_runs_the_call_and_no_does_not(co_dirs: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    app = app_with({"t": sdk_server(env={"NOTE_FILE": str(notes)})}, cwd=tmp_path)
    asked: list[str] = []

    def user(decision: object) -> bool:
        asked.append(decision.key)  # type: ignore[attr-defined]
        return "yes" in decision.key or len(asked) == 1  # type: ignore[attr-defined]

    calls = [("t_write_note", {"text": "first"}), ("t_write_note", {"text": "second"})]
    turn = run_turn(app, tmp_path, calls, headless=False, answer=user)
    assert asked == ["mcp:t:write_note", "mcp:t:write_note"]
    assert notes.read_text() == "first\n"
    assert turn.results[0] == "noted" and "the user said no" in turn.results[1]
    answers = [e for e in audit_lines(paths.data_dir()) if e["event"] == "answer"]
    assert [a["effect"] for a in answers] == ["allow", "deny"]


def test_a_deny_rule_blocks_one_tool_with_its_reason_and_others_still_run(
    co_dirs: Path, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    rules = [
        {"match": "mcp:t:*", "effect": "allow"},
        {"match": "mcp:t:write_note", "effect": "deny", "reason": "notes are read-only here"},
    ]
    app = app_with({"t": sdk_server(env={"NOTE_FILE": str(notes)})}, cwd=tmp_path, rules=rules)
    calls = [("t_write_note", {"text": "x"}), ("t_echo", {"text": "hi"})]
    turn = run_turn(app, tmp_path, calls)
    assert not notes.exists()
    assert "notes are read-only here" in turn.results[0]
    assert turn.results[1] == "echo: hi"


def test_read_only_hints_lower_the_default_only_when_the_user_trusts_them(
    co_dirs: Path, tmp_path: Path
) -> None:
    untrusting = app_with({"t": sdk_server()}, cwd=tmp_path)
    turn = run_turn(untrusting, tmp_path, [("t_add", {"a": 2, "b": 3})])
    assert "needs approval" in turn.results[0]

    trusting = app_with({"t": sdk_server()}, cwd=tmp_path, trust_annotations=True)
    turn = run_turn(trusting, tmp_path, [("t_add", {"a": 2, "b": 3}), ("t_echo", {"text": "x"})])
    assert turn.results[0] == "5"  # hinted read-only: allowed by the read-risk default
    assert "needs approval" in turn.results[1]  # no hint: still asks
    assert turn.decisions["call0"].reason == "default for read-risk tools"


def test_a_server_that_fails_to_start_or_dies_is_skipped_and_the_turn_goes_on(
    co_dirs: Path, tmp_path: Path
) -> None:
    servers = {
        "dead": sdk_server(args=[sdk_server()["args"][0], "--exit-at-start"]),
        "missing": {"command": str(tmp_path / "no-such-program")},
        "boom": sdk_server(),
        "t": sdk_server(),
    }
    app = app_with(servers, cwd=tmp_path, rules=[{"match": "mcp:**", "effect": "allow"}])
    calls = [("boom_crash", {}), ("t_echo", {"text": "still here"})]
    turn = run_turn(app, tmp_path, calls)
    assert "MCP server 'boom' stopped" in turn.results[0]
    assert turn.results[1] == "echo: still here"
    assert turn.output.startswith("results: ")
    assert "t_echo" in turn.tools_seen and not any(n.startswith("boom_") for n in turn.tools_seen)
    assert not any(n.startswith(("dead_", "missing_")) for n in turn.tools_seen)
    by_server = {w.split("'")[1]: w for w in turn.warnings}
    assert set(by_server) == {"dead", "missing", "boom"}
    assert all("\n" not in w for w in turn.warnings)
    assert "did not start" in by_server["dead"] and "did not start" in by_server["missing"]
    assert "no-such-program" in by_server["missing"]


def test_an_untrusted_project_never_starts_its_servers(co_dirs: Path, tmp_path: Path) -> None:
    project = tmp_path / "cloned-repo"
    (project / ".co").mkdir(parents=True)
    marker = project / "started"
    starter = {
        "command": sys.executable,
        "args": ["-c", f"open({str(marker)!r}, 'w').close()"],
    }
    (project / ".co" / "settings.json").write_text(json.dumps({"mcp_servers": {"evil": starter}}))
    app = app_with({}, cwd=project)
    turn = run_turn(app, project, [])
    assert not marker.exists()
    assert any("'evil' not started" in w and "co trust" in w for w in turn.warnings)

    trust.trust(project)
    app = app_with({}, cwd=project)
    turn = run_turn(app, project, [])
    assert marker.exists()  # trusted: the project's server was started (and failed, isolated)
    assert any("'evil' did not start" in w for w in turn.warnings)


def test_a_streamable_http_server_gets_its_headers_and_a_wrong_token_is_one_line(
    co_dirs: Path, tmp_path: Path
) -> None:
    with http_server("tok-123") as url:
        servers = {
            "web": {"url": url, "headers": {"Authorization": "Bearer tok-123"}},
            "stranger": {"url": url, "headers": {"Authorization": "Bearer wrong"}},
        }
        app = app_with(servers, cwd=tmp_path, rules=[{"match": "mcp:web:echo", "effect": "allow"}])
        turn = run_turn(app, tmp_path, [("web_echo", {"text": "over http"})])
    assert turn.results == ["echo: over http"]
    assert not any(n.startswith("stranger_") for n in turn.tools_seen)
    assert len(turn.warnings) == 1 and "'stranger' did not start" in turn.warnings[0]
    assert "tok-123" not in turn.warnings[0] and "wrong" not in turn.warnings[0]


def test_odd_tool_names_keep_a_literal_permission_key() -> None:
    from co_core.kernel.tools import ToolSpec
    from co_core.mcp.toolsets import _escape, model_tool_name, permission_key

    key = permission_key("t", "read{path}")
    spec = ToolSpec("t_x", "m:f", "mcp:t", None, _escape(key))
    assert spec.permission_key({"path": "/etc/passwd"}) == "mcp:t:read{path}"
    assert model_tool_name("t", "a.b/c d") == "t_a_b_c_d"


def test_a_server_that_never_answers_is_given_up_on_and_the_turn_goes_on(
    co_dirs: Path, tmp_path: Path
) -> None:
    hang = {"command": sys.executable, "args": ["-c", "import time; time.sleep(300)"]}
    app = app_with({"hang": hang}, cwd=tmp_path, startup_timeout=2)
    turn = run_turn(app, tmp_path, [])
    assert turn.output == "results: "
    assert len(turn.warnings) == 1 and "'hang' did not start" in turn.warnings[0]
    assert "server log:" in turn.warnings[0]


def test_secrets_in_mcp_server_settings_never_reach_the_audit(
    co_dirs: Path, tmp_path: Path
) -> None:
    servers = {
        "t": sdk_server(env={"GITHUB_TOKEN": "plain-gh-value-1234"}),
        "web": {"url": "https://h/mcp", "headers": {"Authorization": "opaque-hdr-value-5678"}},
    }
    app = app_with(servers, cwd=tmp_path)
    body = "token plain-gh-value-1234 and opaque-hdr-value-5678"
    turn = run_turn(app, tmp_path, [("t_echo", {"text": body})])
    assert "needs approval" in turn.results[0]  # decided, denied: nothing ran
    text = "".join(json.dumps(line) for line in audit_lines(paths.data_dir(), turn.session_id))
    assert "plain-gh-value-1234" not in text and "opaque-hdr-value-5678" not in text
    assert "[REDACTED]" in text
