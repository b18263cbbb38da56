"""Slack's failures become one actionable ModelRetry, or, when only the user can fix them,
end the call with Slack's reason in one line; 429 waits for Retry-After."""

from __future__ import annotations

import logging
import socket

import pytest
from co_slack.errors import EXPLAINED, FATAL, SlackProblem
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


def test_a_rejected_token_from_the_environment_says_to_fix_the_variable(make_ctx, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-revoked-or-wrong")
    with pytest.raises(SlackProblem) as caught:
        list_slack_channels(make_ctx())
    said = str(caught.value)
    assert said.startswith("Slack rejected the bot token from env:SLACK_BOT_TOKEN (invalid_auth: ")
    assert "Set SLACK_BOT_TOKEN to a valid bot token (xoxb-…)" in said
    assert "xoxb-revoked-or-wrong" not in said and "\n" not in said


def test_after_a_rejected_token_a_new_login_is_picked_up(make_ctx, monkeypatch, co_dirs):
    from co_slack.token import save

    monkeypatch.setenv("SLACK_BOT_TOKEN", "")
    save("xoxb-revoked-or-wrong")
    ctx = make_ctx()
    with pytest.raises(SlackProblem, match=r"invalid_auth.*Run `co slack login`"):
        list_slack_channels(ctx)
    save(TOKEN)  # the user ran `co slack login` in another terminal
    assert list_slack_channels(ctx).count == 5


def test_a_missing_scope_is_named(make_ctx, fake):
    fake.scopes.discard("chat:write")
    with pytest.raises(SlackProblem, match=r"lacks the OAuth scope chat:write.*reinstall"):
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
    with pytest.raises(SlackProblem, match=r"not connected.*co slack login"):
        post_slack_message(make_ctx(), "general", "hello")
    assert fake.requests == []


def test_an_unreachable_server_is_one_sentence(make_ctx, monkeypatch):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    monkeypatch.setenv("CO_SLACK_BASE_URL", f"http://127.0.0.1:{port}/api/")
    with pytest.raises(SlackProblem, match=f"could not be reached at http://127.0.0.1:{port}/api/"):
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


def test_a_revoked_token_says_to_log_in_again(make_ctx, fake, monkeypatch):
    from co_slack.token import save

    monkeypatch.delenv("SLACK_BOT_TOKEN")
    path = save(TOKEN)
    fake.revoked = True
    with pytest.raises(SlackProblem) as caught:
        read_slack_channel(make_ctx(), "C0GENERAL1")
    assert str(caught.value) == (
        f"Slack rejected the bot token from {path} (token_revoked: the token is for a deleted "
        "user or workspace, or the app has been removed). Run `co slack login` with a valid "
        "bot token (xoxb-…)."
    )


def test_a_bot_token_in_settings_says_how_to_replace_it(make_ctx, fake, monkeypatch, co_dirs):
    from co_core.testing import write_settings

    monkeypatch.delenv("SLACK_BOT_TOKEN")
    write_settings({"slack": {"bot_token": TOKEN}}, co_dirs)
    fake.revoked = True
    with pytest.raises(SlackProblem, match=r"bot token from settings.json \(token_revoked") as e:
        read_slack_channel(make_ctx(), "C0GENERAL1")
    assert "`co config set slack.bot_token xoxb-…`" in str(e.value)


@pytest.mark.parametrize("code", sorted(FATAL - {"not_connected", "unreachable", "no_user_token"}))
@pytest.mark.parametrize("tool", ["list", "read", "post"])
def test_every_error_only_the_user_can_fix_ends_the_call_in_one_line(make_ctx, fake, code, tool):
    method = {"list": "conversations.list", "read": "conversations.history"}.get(
        tool, "chat.postMessage"
    )
    fake.errors[method] = code
    ctx = make_ctx()
    with pytest.raises(SlackProblem) as caught:  # not ModelRetry: the model cannot fix it
        if tool == "list":
            list_slack_channels(ctx)
        elif tool == "read":
            read_slack_channel(ctx, "C0GENERAL1")
        else:
            post_slack_message(ctx, "C0GENERAL1", "hello")
    said = str(caught.value)
    assert caught.value.code == code and f"({code}" in said
    assert "\n" not in said and TOKEN not in said and "Do not retry" not in said
    if code in EXPLAINED:
        assert EXPLAINED[code] in said
    # asked once, not retried (a listing without groups:read asks for public channels)
    assert len(fake.calls(method)) == (2 if (tool, code) == ("list", "missing_scope") else 1)


def test_an_error_the_model_can_fix_is_still_a_retry(make_ctx, fake):
    fake.errors["conversations.history"] = "invalid_cursor"
    with pytest.raises(ModelRetry, match="invalid_cursor"):
        read_slack_channel(make_ctx(), "C0GENERAL1")


def test_a_fatal_error_ends_the_turn_with_one_line_and_no_retry(slack_env, fake):
    from co_core.testing import make_app, run_turn, script_calls

    fake.revoked = True
    seen: list[list[str]] = []

    def answer(results: list[str]) -> str:
        seen.append(results)
        return "done"

    script = script_calls(("read_slack_channel", {"channel": "C0GENERAL1"}), answer=answer)
    with pytest.raises(SlackProblem, match=r"^Slack rejected the bot token .*token_revoked"):
        run_turn(make_app(), "what is new in general?", script)
    assert seen == []  # the model was never handed the failure to try again
    assert len(fake.requests) == 1  # Slack was asked once


def test_co_ask_shows_the_fatal_error_as_one_line(slack_env, fake):
    from pathlib import Path

    from co_core.testing import run_co

    fake.revoked = True
    done = run_co(
        "ask", "--model", "function:slack_scripts:read_general", "what is new?",
        env={"PYTHONPATH": str(Path(__file__).parent)},
    )  # fmt: skip
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert any("token_revoked" in line and "co slack login" in line for line in lines), lines
    assert TOKEN not in done.stdout + done.stderr
