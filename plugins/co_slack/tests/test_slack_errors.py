"""Slack's failures become one actionable ModelRetry; 429 waits for Retry-After."""

from __future__ import annotations

import logging
import socket

import pytest
from co_slack.keys import SLACK
from co_slack.tools import list_slack_channels, post_slack_message, read_slack_channel
from pydantic_ai import ModelRetry
from slack_fake import TOKEN


def test_reading_a_channel_the_bot_is_not_in_says_how_to_invite_it(make_ctx):
    with pytest.raises(ModelRetry, match=r"not a member of channel 'design'.*/invite"):
        read_slack_channel(make_ctx(), "design")


def test_posting_where_the_bot_is_not_a_member_posts_nothing(make_ctx, fake):
    with pytest.raises(ModelRetry, match="/invite"):
        post_slack_message(make_ctx(), "C0DESIGN01", "hello")
    assert "hello" not in str(fake.history.get("C0DESIGN01"))


def test_an_unknown_channel_name_points_to_list_slack_channels(make_ctx, fake):
    with pytest.raises(ModelRetry, match=r"no channel 'marketing'.*list_slack_channels"):
        post_slack_message(make_ctx(), "marketing", "hello")
    assert fake.posted == []  # never sent: the name did not resolve


def test_an_unknown_channel_id_is_reported_by_slack(make_ctx):
    with pytest.raises(ModelRetry, match=r"no channel 'C0NOPE0001'.*list_slack_channels"):
        read_slack_channel(make_ctx(), "C0NOPE0001")


def test_a_rejected_token_says_to_log_in_again(make_ctx, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-revoked-or-wrong")
    with pytest.raises(ModelRetry, match=r"invalid_auth.*co slack login") as caught:
        list_slack_channels(make_ctx())
    assert "xoxb-revoked-or-wrong" not in str(caught.value)


def test_after_a_rejected_token_a_new_login_is_picked_up(make_ctx, monkeypatch, co_dirs):
    from co_slack.token import save

    monkeypatch.setenv("SLACK_BOT_TOKEN", "")
    save("xoxb-revoked-or-wrong")
    ctx = make_ctx()
    with pytest.raises(ModelRetry, match="invalid_auth"):
        list_slack_channels(ctx)
    save(TOKEN)  # the user ran `co slack login` in another terminal
    assert list_slack_channels(ctx).count == 5


def test_a_missing_scope_is_named(make_ctx, fake):
    fake.scopes.discard("chat:write")
    with pytest.raises(ModelRetry, match=r"lacks the OAuth scope chat:write.*reinstall"):
        post_slack_message(make_ctx(), "general", "hello")


def test_without_groups_read_public_channels_are_still_listed(make_ctx, fake):
    fake.scopes.discard("groups:read")
    result = list_slack_channels(make_ctx())
    assert "#general" in result.display and "secret-plans" not in result.display
    assert fake.calls("conversations.list")[-1].params["types"] == "public_channel"


def test_without_users_read_messages_show_ids(make_ctx, fake):
    fake.scopes.discard("users:read")
    result = read_slack_channel(make_ctx(), "general")
    assert "U0ADA00001: Good morning all" in result.display


def test_http_429_is_retried_after_retry_after(make_ctx, fake):
    fake.rate_limited["conversations.list"] = 1
    fake.retry_after = 0
    result = list_slack_channels(make_ctx())
    assert result.count == 5
    assert len(fake.calls("conversations.list")) == 2  # the 429, then the retry


def test_when_429_persists_the_model_is_told_to_wait(make_ctx, fake):
    fake.rate_limited["chat.postMessage"] = 5
    fake.retry_after = 30
    ctx = make_ctx({"slack": {"rate_limit_retries": 0}})
    with pytest.raises(ModelRetry, match="rate limiting Co for 30 s"):
        post_slack_message(ctx, "C0GENERAL1", "hello")
    assert "hello" not in str(fake.history["C0GENERAL1"])


def test_without_a_token_nothing_is_sent(make_ctx, fake, monkeypatch):
    monkeypatch.delenv("SLACK_BOT_TOKEN")
    with pytest.raises(ModelRetry, match=r"not connected.*co slack login"):
        post_slack_message(make_ctx(), "general", "hello")
    assert fake.requests == []


def test_an_unreachable_server_is_one_sentence(make_ctx, monkeypatch):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    monkeypatch.setenv("CO_SLACK_BASE_URL", f"http://127.0.0.1:{port}/api/")
    with pytest.raises(ModelRetry, match=f"could not be reached at http://127.0.0.1:{port}/api/"):
        list_slack_channels(make_ctx())


def test_the_token_never_reaches_logs_or_errors(make_ctx, fake, caplog):
    caplog.set_level(logging.DEBUG)
    messages = []
    ctx = make_ctx()
    list_slack_channels(ctx)
    read_slack_channel(ctx, "general")
    post_slack_message(ctx, "general", "hi")
    fake.rate_limited["conversations.history"] = 1
    read_slack_channel(ctx, "general")
    for bad in ("design", "nowhere"):
        with pytest.raises(ModelRetry) as caught:
            read_slack_channel(ctx, bad)
        messages.append(str(caught.value))
    assert fake.requests and all(r.authorization == f"Bearer {TOKEN}" for r in fake.requests)
    assert "Sending a request" in caplog.text  # slack_sdk did log at DEBUG
    assert TOKEN not in caplog.text
    assert all(TOKEN not in m for m in messages)
    assert TOKEN not in repr(ctx.deps.resource(SLACK))
    assert TOKEN not in repr(ctx.deps.settings.section("slack"))


def test_a_post_whose_answer_is_lost_is_not_sent_again(make_ctx, fake):
    """The connection drops after Slack posted: retrying would post the message twice."""
    fake.drop_after["chat.postMessage"] = 1
    with pytest.raises(ModelRetry, match="may have been posted.*read_slack_channel"):
        post_slack_message(make_ctx(), "general", "Deploy starts now")
    assert len(fake.posted) == 1
    assert [m["text"] for m in fake.history["C0GENERAL1"]].count("Deploy starts now") == 1


def test_a_read_whose_answer_is_lost_is_retried(make_ctx, fake):
    fake.drop_after["conversations.history"] = 1
    assert read_slack_channel(make_ctx(), "general").count == 3
    assert len(fake.calls("conversations.history")) == 2


def test_a_long_retry_after_is_not_waited_for_and_the_model_is_told(make_ctx, fake):
    fake.rate_limited["conversations.list"] = 1
    fake.retry_after = 15
    ctx = make_ctx()
    slept: list[float] = []
    ctx.deps.resource(SLACK).sleep = slept.append
    with pytest.raises(ModelRetry, match=r"rate limiting Co for 15 s.*waits at most 10 s"):
        list_slack_channels(ctx)
    assert slept == [] and len(fake.calls("conversations.list")) == 1


def test_a_short_retry_after_is_waited_for(make_ctx, fake):
    fake.rate_limited["conversations.list"] = 1
    fake.retry_after = 2
    ctx = make_ctx()
    slept: list[float] = []
    ctx.deps.resource(SLACK).sleep = slept.append
    assert list_slack_channels(ctx).count == 5
    assert slept == [2]


def test_a_revoked_token_says_to_log_in_again(make_ctx, fake):
    fake.revoked = True
    with pytest.raises(ModelRetry, match=r"token_revoked.*co slack login"):
        read_slack_channel(make_ctx(), "general")
