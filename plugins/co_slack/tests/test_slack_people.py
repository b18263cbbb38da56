"""People, direct messages, search with a user token, and the canonical channel key."""

from __future__ import annotations

import pytest
from co_slack.errors import SlackProblem
from co_slack.keys import SLACK
from co_slack.tools import find_slack_user, post_slack_message, read_slack_channel, search_slack
from slack_fake import USER_TOKEN


def test_find_people_by_name_handle_email_or_id(make_ctx, fake):
    ctx = make_ctx()
    by_name = find_slack_user(ctx, "hopper")
    assert by_name.display == (
        "Grace Hopper (@grace) · U0GRACE001 · Rear Admiral · grace@acme.test · Europe/Paris"
    )
    assert find_slack_user(ctx, "@ada").count == 1
    assert len(fake.calls("users.list")) == 1  # the directory is listed once per session
    by_mail = find_slack_user(ctx, "ADA@acme.test")
    assert "Ada Lovelace (@ada) · U0ADA00001" in by_mail.display
    assert fake.calls("users.lookupByEmail")[0].params["email"] == "ADA@acme.test"
    assert find_slack_user(ctx, "U0GRACE001").count == 1
    assert find_slack_user(ctx, "nobody@acme.test").count == 0


def test_without_users_read_email_addresses_are_not_shown(make_ctx, fake):
    fake.scopes.discard("users:read.email")
    assert "grace@acme.test" not in find_slack_user(make_ctx(), "grace").display


def test_a_direct_message_to_a_person_and_reading_it_back(make_ctx, fake):
    ctx = make_ctx()
    reply = post_slack_message(ctx, "@grace", "Your build is green")
    assert reply.startswith("Posted to @grace: https://acme.slack.com/archives/D0GRACE001/")
    (opened,) = fake.calls("conversations.open")
    assert opened.params["users"] == "U0GRACE001"
    assert fake.posted[0].params["channel"] == "D0GRACE001"
    dm = read_slack_channel(ctx, "U0GRACE001")
    assert dm.display.startswith("@grace: 1 message") and "Your build is green" in dm.display


def test_reading_dms_without_im_history_names_the_scope(make_ctx, fake):
    fake.scopes.discard("im:history")
    with pytest.raises(SlackProblem, match="lacks the OAuth scope im:history"):
        read_slack_channel(make_ctx(), "@ada")


def test_search_needs_a_user_token_and_says_so(make_ctx, fake):
    with pytest.raises(SlackProblem, match="user token.*SLACK_USER_TOKEN") as caught:
        search_slack(make_ctx(), "release")
    assert "`co slack login` does not store" in str(caught.value)
    assert fake.calls("search.messages") == []


def test_search_with_a_user_token(make_ctx, fake, monkeypatch, caplog):
    import logging

    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("SLACK_USER_TOKEN", USER_TOKEN)
    ctx = make_ctx()
    result = search_slack(ctx, "release train")
    assert USER_TOKEN not in caplog.text and USER_TOKEN not in result.display
    assert USER_TOKEN not in repr(ctx.deps.settings.section("slack"))
    assert result.count == 1 and not result.has_more
    assert "#general  " in result.display and "grace: Release train leaves Friday" in result.display
    assert "https://acme.slack.com/archives/C0GENERAL1/p1700000020000200" in result.display
    (call,) = fake.calls("search.messages")
    assert call.authorization == f"Bearer {USER_TOKEN}"


def test_a_bot_token_given_as_user_token_is_refused_clearly(make_ctx, fake, monkeypatch):
    monkeypatch.setenv("SLACK_USER_TOKEN", fake.token)
    with pytest.raises(SlackProblem, match="not_allowed_token_type.*needs a user token"):
        search_slack(make_ctx(), "release")


def test_a_revoked_user_token_is_named_with_how_to_give_one(make_ctx, fake, monkeypatch):
    monkeypatch.setenv("SLACK_USER_TOKEN", USER_TOKEN)
    fake.revoked_user = True
    ctx = make_ctx()
    assert read_slack_channel(ctx, "general").count == 3  # the bot token still works
    with pytest.raises(SlackProblem) as caught:
        search_slack(ctx, "release")
    said = str(caught.value)
    assert said.startswith("Slack rejected the user token from env:SLACK_USER_TOKEN (token_revoked")
    assert "search_slack needs a user token (xoxp-…) with the search:read scope" in said
    assert "`co slack login` does not store" in said and "set SLACK_USER_TOKEN" in said
    assert "bot token" not in said and USER_TOKEN not in said


@pytest.mark.parametrize(
    ("typed", "key", "arg"),
    [
        ("general", "#general", "#general(C0GENERAL1)"),
        ("#General", "#general", "#general(C0GENERAL1)"),
        ("GENERAL", "#general", "#general(C0GENERAL1)"),
        ("C0GENERAL1", "#general", "#general(C0GENERAL1)"),
        ("<#C0GENERAL1|general>", "#general", "#general(C0GENERAL1)"),
        ("<#C0GENERAL1>", "#general", "#general(C0GENERAL1)"),
        ("#general(C0GENERAL1)", "#general", "#general(C0GENERAL1)"),
        ("@Grace", "@grace(U0GRACE001)", "@grace(U0GRACE001)"),
        ("@Grace Hopper", "@grace(U0GRACE001)", "@grace(U0GRACE001)"),
        ("U0GRACE001", "@grace(U0GRACE001)", "@grace(U0GRACE001)"),
        ("<@U0GRACE001>", "@grace(U0GRACE001)", "@grace(U0GRACE001)"),
        ("@grace(U0GRACE001)", "@grace(U0GRACE001)", "@grace(U0GRACE001)"),
    ],
)
def test_every_way_of_naming_a_target_gives_one_key_and_the_id(make_ctx, typed, key, arg):
    from co_slack.identity import resolve

    target = resolve(make_ctx().deps.resource(SLACK), typed)
    assert (target.key, target.arg) == (key, arg)


def test_the_label_of_a_slack_link_is_not_trusted(make_ctx, fake):
    """``<#C0RELEASE1|general>`` is #releases, whatever its label says: the key names
    the channel the id is, and the post goes there."""
    from co_slack.identity import resolve

    slack = make_ctx().deps.resource(SLACK)
    assert resolve(slack, "<#C0RELEASE1|general>").key == "#releases"
    assert resolve(slack, "#general(C0RELEASE1)").key == "#releases"
    assert resolve(slack, "@ada(U0GRACE001)").key == "@grace(U0GRACE001)"


def test_ids_are_looked_up_once_per_session(make_ctx, fake):
    from co_slack.identity import resolve

    slack = make_ctx().deps.resource(SLACK)
    for _ in range(2):
        assert resolve(slack, "C0RELEASE1").key == "#releases"
        assert resolve(slack, "U0GRACE001").key == "@grace(U0GRACE001)"
    assert [r.method for r in fake.requests] == ["conversations.info", "users.info"]
    with pytest.raises(SlackProblem, match="no channel"):
        resolve(slack, "C0NOPE0001")  # neither an id nor a name Slack knows
