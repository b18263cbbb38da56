"""Slack's tools are offered only once a token is there (``plugin_ready``)."""

from __future__ import annotations

from pathlib import Path

import co_slack.plugin
import pytest
from slack_fake import TOKEN

from co_core.testing import status_rows, use_plugin


@pytest.fixture(autouse=True)
def _no_token_from_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)


def test_without_a_token_slack_tools_are_not_offered(co_dirs: Path) -> None:
    with use_plugin(co_slack.plugin, name="slack") as app:
        row = status_rows(app)["slack tools"]
    assert row.state == "off"
    assert row.detail == (
        "not offered: Slack is not connected: run `co slack login` (or set SLACK_BOT_TOKEN)"
    )


def test_a_saved_or_configured_token_makes_slack_ready(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (co_dirs / "slack-token").write_text(TOKEN + "\n", encoding="utf-8")
    (co_dirs / "slack-token").chmod(0o600)
    with use_plugin(co_slack.plugin, name="slack") as app:
        assert status_rows(app)["slack tools"].state == "ok"
    (co_dirs / "slack-token").unlink()
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    with use_plugin(co_slack.plugin, name="slack") as app:
        assert status_rows(app)["slack tools"].state == "ok"
