"""``co policy``, ``co policy explain`` and ``co audit`` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from co_core.kernel import trust
from co_core.policy.audit import AuditLog
from co_core.testing import write_settings


def co(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from co_core.cli.main import main; main()", *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_policy_lists_rules_with_their_sources(co_dirs: Path, tmp_path: Path) -> None:
    settings = write_settings(
        {"policy": {"rules": [{"match": "shell:exec:git status *", "effect": "allow"}]}}, co_dirs
    )
    (tmp_path / ".co").mkdir()
    (tmp_path / ".co" / "policy.json").write_text(
        json.dumps({"rules": [{"match": "slack:post:*", "effect": "deny"}]})
    )
    trust.trust(tmp_path)
    result = co("policy", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["user"] == [
        {
            "match": "shell:exec:git status *",
            "effect": "allow",
            "origin": str(settings),
            "reason": None,
        }
    ]
    assert data["project"][0]["match"] == "slack:post:*"
    assert data["project"][0]["origin"] == str(tmp_path.resolve() / ".co" / "policy.json")
    table = co("policy", cwd=tmp_path)
    assert "shell:exec:git status *" in table.stdout and "slack:post:*" in table.stdout


def test_explain_names_the_deciding_rule_for_each_part(co_dirs: Path, tmp_path: Path) -> None:
    write_settings(
        {"policy": {"rules": [{"match": "shell:exec:git status *", "effect": "allow"}]}}, co_dirs
    )
    result = co("policy", "explain", "shell:exec:git status; rm -rf ~", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("shell:exec:git status; rm -rf ~: ASK (source: default)")
    assert "part 'shell:exec:git status': allow by user" in out
    assert "part 'shell:exec:rm -rf ~': ask by default" in out
    yolo = co("policy", "explain", "shell:exec:rm -rf ~", "--yolo", cwd=tmp_path)
    assert "ALLOW (source: flag)" in yolo.stdout and "--yolo" in yolo.stdout
    headless = co("policy", "explain", "fs:write:a.txt", "--headless", cwd=tmp_path)
    assert "DENY (source: headless)" in headless.stdout
    assert "--approve fs:write:a.txt" in headless.stdout


def test_audit_shows_and_filters_entries(co_dirs: Path, tmp_path: Path) -> None:
    one, two = AuditLog("one"), AuditLog("two")
    one.write(
        "decision",
        {"tool": "run_shell", "effect": "ask", "source": "default", "permission": "shell:exec:ls"},
    )
    one.write(
        "decision",
        {"tool": "read_file", "effect": "allow", "source": "default", "permission": "fs:read:a"},
    )
    two.write(
        "decision",
        {"tool": "run_shell", "effect": "deny", "source": "user", "permission": "shell:exec:rm x"},
    )
    two.write(
        "execution",
        {"tool": "read_file", "permission": "fs:read:a", "status": "error", "error": "gone"},
    )

    def entries(*args: str) -> list[dict]:
        result = co("audit", "--json", *args, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        return [json.loads(line) for line in result.stdout.splitlines()]

    assert len(entries()) == 4
    assert [e["permission"] for e in entries("--tool", "run_shell")] == [
        "shell:exec:ls",
        "shell:exec:rm x",
    ]
    assert [e["session"] for e in entries("--decision", "deny")] == ["two"]
    assert {e["session"] for e in entries("--session", "one")} == {"one"}
    assert len(entries("-n", "1")) == 1
    table = co("audit", cwd=tmp_path)
    assert "shell:exec:rm x" in table.stdout and "gone" in table.stdout
    bad = co("audit", "--decision", "maybe", cwd=tmp_path)
    assert bad.returncode != 0 and "--decision must be one of" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_status_warns_about_an_untrusted_project_policy(co_dirs: Path, tmp_path: Path) -> None:
    (tmp_path / ".co").mkdir()
    (tmp_path / ".co" / "policy.json").write_text('{"rules": [{"match": "**", "effect": "allow"}]}')
    rows = json.loads(co("status", "--json", cwd=tmp_path).stdout)
    policy = next(r for r in rows if r["name"] == "policy")
    assert policy["state"] == "warn" and "not trusted" in policy["detail"]
    trust.trust(tmp_path)
    rows = json.loads(co("status", "--json", cwd=tmp_path).stdout)
    policy = next(r for r in rows if r["name"] == "policy")
    assert policy["state"] == "ok" and "1 project rules" in policy["detail"]


def test_audit_never_replays_escape_sequences_to_the_terminal(
    co_dirs: Path, tmp_path: Path
) -> None:
    AuditLog("esc").write(
        "decision",
        {"tool": "run_shell", "effect": "ask", "permission": "shell:exec:\x1b[2Jrm -rf ~"},
    )
    result = co("audit", cwd=tmp_path)
    assert "\x1b[2J" not in result.stdout and "\\x1b[2J" in result.stdout
    explain = co("policy", "explain", "shell:exec:echo \x1b]0;pwned\x07", cwd=tmp_path)
    assert "\x1b" not in explain.stdout and "\x07" not in explain.stdout


def test_explain_a_tool_call_shows_the_key_rules_will_match(co_dirs: Path, tmp_path: Path) -> None:
    write_settings(
        {"policy": {"rules": [{"match": "fs:read:secrets/**", "effect": "deny"}]}}, co_dirs
    )
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "x").write_text("hidden")
    (tmp_path / "shortcut").symlink_to(tmp_path / "secrets")
    for path in ("./secrets/x", "src/../secrets/x", "shortcut/x", str(tmp_path / "secrets/x")):
        args = json.dumps({"path": path})
        result = co("policy", "explain", "--tool", "read_file", "--args", args, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("fs:read:secrets/x: DENY (source: user)"), result.stdout
    outside = co(
        "policy", "explain", "--tool", "read_file", "--args", '{"path": "../x"}', cwd=tmp_path
    )
    assert outside.returncode == 1 and "outside the workspace" in outside.stderr
    wrong = co("policy", "explain", "--tool", "read_file", "--args", "{path}", cwd=tmp_path)
    assert wrong.returncode == 2 and "--args is not JSON" in wrong.stderr


def test_explain_shows_the_command_as_co_runs_it(co_dirs: Path, tmp_path: Path) -> None:
    write_settings(
        {"policy": {"rules": [{"match": "shell:exec:ls *", "effect": "allow"}]}}, co_dirs
    )
    result = co("policy", "explain", "shell:exec:'ls'   \"-la\"\nls src", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("shell:exec:ls -la; ls src: ALLOW")
    dynamic = co("policy", "explain", "shell:exec:ls $HOME", cwd=tmp_path)
    assert "ASK (source: shell-parser)" in dynamic.stdout
    assert "a variable ($HOME) is expanded when it runs" in dynamic.stdout
