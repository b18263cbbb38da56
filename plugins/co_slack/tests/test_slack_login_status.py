"""`co slack login/logout` and `co status`, run as the user runs them (a real pty)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from slack_fake import TOKEN

CO = str(Path(sys.executable).with_name("co"))


@pytest.fixture
def env(co_dirs, slack_server, monkeypatch):
    """The environment of a user who has not connected Slack yet."""
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    monkeypatch.setenv("CO_SLACK_BASE_URL", slack_server.base_url)
    monkeypatch.setenv("CO_LOAD_PLUGINS", "slack")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    return dict(os.environ)


def co(env, *args):
    return subprocess.run([CO, *args], env=env, capture_output=True, text=True, timeout=60)


def slack_row(env):
    result = co(env, "status", "--json")
    return next(row for row in json.loads(result.stdout) if row["name"] == "slack")


def login(env, token):
    child = pexpect.spawn(CO, ["slack", "login"], env=env, encoding="utf-8", timeout=60)
    child.expect("Slack bot token: ")
    child.sendline(token)
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus, child.before


def test_status_is_off_without_a_token(env):
    row = slack_row(env)
    assert row["state"] == "off" and "co slack login" in row["detail"]


def test_login_checks_the_token_stores_it_privately_and_status_uses_it(env, co_dirs, fake):
    code, output = login(env, TOKEN)
    assert code == 0, output
    assert "Connected to workspace Acme (acme.slack.com) as @cobot" in output
    assert TOKEN not in output  # typed without echo
    saved = co_dirs / "slack-token"
    assert saved.read_text().strip() == TOKEN
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert [r.method for r in fake.requests] == ["auth.test"]

    row = slack_row(env)
    assert row["state"] == "ok"
    assert row["detail"].startswith("workspace Acme (acme.slack.com) as @cobot")
    assert TOKEN not in json.dumps(row)

    out = co(env, "slack", "logout")
    assert out.returncode == 0 and "Removed" in out.stdout
    assert not saved.exists()
    assert slack_row(env)["state"] == "off"


def test_a_rejected_token_is_not_saved(env, co_dirs):
    code, output = login(env, "xoxb-wrong-token-value")
    assert code == 1
    assert "token not saved: invalid_auth" in output
    assert "Traceback" not in output and "xoxb-wrong-token-value" not in output
    assert not (co_dirs / "slack-token").exists()


def test_status_fails_with_a_rejected_env_token(env):
    env["SLACK_BOT_TOKEN"] = "xoxb-wrong-token-value"
    row = slack_row(env)
    assert row["state"] == "fail"
    assert "invalid_auth" in row["detail"] and "env:SLACK_BOT_TOKEN" in row["detail"]
    assert "xoxb-wrong-token-value" not in row["detail"]


def test_a_token_file_others_can_read_is_refused(env, co_dirs, fake):
    saved = co_dirs / "slack-token"
    saved.write_text(TOKEN + "\n")
    saved.chmod(0o644)
    row = slack_row(env)
    assert row["state"] == "fail" and "readable by other users" in row["detail"]
    assert fake.requests == []  # the token was not used


def test_logout_without_login_says_so(env):
    out = co(env, "slack", "logout")
    assert out.returncode == 0 and "nothing to remove" in out.stdout


def test_plain_http_base_url_to_another_host_is_refused(env):
    env["CO_SLACK_BASE_URL"] = "http://slack.example.com/api/"
    env["SLACK_BOT_TOKEN"] = TOKEN
    result = co(env, "status")
    assert result.returncode != 0
    assert "CO_SLACK_BASE_URL" in result.stdout + result.stderr
    assert "must use https" in result.stdout + result.stderr
    assert TOKEN not in result.stdout + result.stderr


def test_login_reads_the_token_from_a_pipe(env, co_dirs):
    result = subprocess.run(
        [CO, "slack", "login"], env=env, input=TOKEN + "\n", capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert TOKEN not in result.stdout + result.stderr
    assert (co_dirs / "slack-token").read_text().strip() == TOKEN


def test_a_token_in_settings_json_is_used_and_named_as_such(env):
    assert co(env, "config", "set", "slack.bot_token", TOKEN).returncode == 0
    row = slack_row(env)
    assert row["state"] == "ok" and row["detail"].endswith("(token from settings.json)")
