"""Against the real Slack when SLACK_BOT_TOKEN is set (skipped otherwise).

CO_SLACK_LIVE_CHANNEL names a channel the bot is in to read; set CO_SLACK_LIVE_POST=1
as well to post one test message there.
"""

from __future__ import annotations

import os

import pytest

LIVE_TOKEN = os.environ.get("SLACK_BOT_TOKEN", "")
CHANNEL = os.environ.get("CO_SLACK_LIVE_CHANNEL", "")

pytestmark = pytest.mark.skipif(
    not LIVE_TOKEN,
    reason="live Slack tests need SLACK_BOT_TOKEN (a bot token for a test workspace)",
)


@pytest.fixture
def live_ctx(co_dirs, monkeypatch):
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from co_core.testing import make_deps

    monkeypatch.delenv("CO_SLACK_BASE_URL", raising=False)
    monkeypatch.setenv("CO_LOAD_PLUGINS", "slack")
    return RunContext(deps=make_deps(), model=TestModel(), usage=RunUsage())


def test_live_status_names_the_workspace(live_ctx):
    from co_slack.status import slack_check

    result = slack_check(live_ctx.deps.settings)
    assert result.state == "ok", result.detail
    assert result.detail.startswith("workspace ") and " as @" in result.detail


def test_live_channels_page(live_ctx):
    from co_slack.tools import list_slack_channels

    result = list_slack_channels(live_ctx)
    assert result.count is not None and LIVE_TOKEN not in result.display
    if result.has_more:
        assert list_slack_channels(live_ctx, page=2).count is not None


@pytest.mark.skipif(not CHANNEL, reason="set CO_SLACK_LIVE_CHANNEL to read a live channel")
def test_live_read_channel(live_ctx):
    from co_slack.tools import read_slack_channel

    result = read_slack_channel(live_ctx, CHANNEL, limit=5)
    assert result.count is not None and result.count <= 5


@pytest.mark.skipif(
    not (CHANNEL and os.environ.get("CO_SLACK_LIVE_POST") == "1"),
    reason="set CO_SLACK_LIVE_CHANNEL and CO_SLACK_LIVE_POST=1 to post a live test message",
)
def test_live_post_returns_a_permalink(live_ctx):
    from co_slack.tools import post_slack_message

    reply = post_slack_message(live_ctx, CHANNEL, "Co live test message (safe to delete)")
    assert "https://" in reply and "slack.com/archives/" in reply


def test_live_find_the_bot_itself(live_ctx):
    from co_slack.status import auth_test
    from co_slack.tools import find_slack_user

    me = auth_test(LIVE_TOKEN, live_ctx.deps.settings)
    result = find_slack_user(live_ctx, me["user_id"])
    assert result.count == 1 and me["user_id"] in result.display
