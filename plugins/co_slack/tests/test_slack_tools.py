"""The three tools against a local Slack Web API, through the real slack_sdk WebClient."""

from __future__ import annotations

import pytest
from co_slack.tools import list_slack_channels, post_slack_message, read_slack_channel
from pydantic_ai import ModelRetry


def test_channels_come_in_pages_and_the_next_page_works(make_ctx, fake):
    ctx = make_ctx({"slack": {"page_size": 2}})

    first = list_slack_channels(ctx)
    assert (first.count, first.has_more, first.next_page) == (2, True, 2)
    assert "#general  C0GENERAL1  [member]" in first.display
    assert "Company-wide announcements" in first.display
    assert "list_slack_channels(page=2)" in first.display

    second = list_slack_channels(ctx, page=2)
    assert "#design  C0DESIGN01  [not a member]" in second.display
    assert "#secret-plans  G0SECRET01  (private)" in second.display
    # page 2 was fetched with the cursor Slack returned for page 1
    sent = fake.calls("conversations.list")[-1].params["cursor"]
    first_cursor = fake.calls("conversations.list")[0]
    assert "cursor" not in first_cursor.params and sent

    third = list_slack_channels(ctx, page=3)
    assert (third.count, third.has_more) == (1, False)
    assert "#releases" in third.display

    past = list_slack_channels(ctx, page=7)
    assert past.count == 0 and not past.has_more


def test_a_later_page_can_be_asked_for_first(make_ctx):
    third = list_slack_channels(make_ctx({"slack": {"page_size": 2}}), page=3)
    assert third.count == 1 and "#releases" in third.display


def test_page_zero_is_a_retry(make_ctx):
    with pytest.raises(ModelRetry, match="page starts at 1"):
        list_slack_channels(make_ctx(), page=0)


def test_reading_a_channel_by_name_shows_people_and_threads(make_ctx, fake):
    result = read_slack_channel(make_ctx(), "#general")
    lines = result.display.splitlines()
    assert result.count == 3 and not result.has_more
    assert lines[0] == "#general: 3 messages, oldest first"
    assert "Ada Lovelace: Good morning all" in lines[1]  # oldest first
    assert "grace: Release train leaves Friday  [ts 1700000020.000200]" in lines[2]
    assert "↳ thread: 2 replies" in lines[3] and "thread_ts 1700000020.000200" in lines[3]
    assert "Thanks @grace, see #random" in lines[4]
    assert "U0GRACE001" not in result.display
    # names are asked once per person, not once per message
    asked = sorted(r.params["user"] for r in fake.calls("users.info"))
    assert asked == ["U0ADA00001", "U0GRACE001"]
    # the history call used the channel's id, resolved from its name
    assert fake.calls("conversations.history")[0].params["channel"] == "C0GENERAL1"


def test_oldest_and_limit_reach_slack(make_ctx, fake):
    ctx = make_ctx()
    newer = read_slack_channel(ctx, "C0GENERAL1", oldest="1700000015")
    assert newer.count == 2 and "Good morning" not in newer.display

    latest = read_slack_channel(ctx, "general", limit=1)
    assert latest.count == 1 and latest.has_more
    assert "older ones exist" in latest.display
    assert fake.calls("conversations.history")[-1].params["limit"] == "1"


def test_oldest_as_an_iso_date(make_ctx, fake):
    ctx = make_ctx()
    assert read_slack_channel(ctx, "general", oldest="2000-01-01").count == 3
    since = read_slack_channel(ctx, "general", oldest="2023-11-14T22:13:35Z")
    assert since.count == 2 and "Good morning" not in since.display
    assert fake.calls("conversations.history")[-1].params["oldest"] == "1700000015.000000"


def test_a_bad_oldest_is_a_retry_before_anything_is_sent(make_ctx, fake):
    with pytest.raises(ModelRetry, match="2026-11-20"):
        read_slack_channel(make_ctx(), "general", oldest="last tuesday")
    assert fake.calls("conversations.history") == []


def test_an_empty_channel_is_an_empty_result(make_ctx):
    result = read_slack_channel(make_ctx(), "random")
    assert result.count == 0 and "No messages in #random" in result.display


def test_limit_out_of_range_is_a_retry(make_ctx):
    with pytest.raises(ModelRetry, match="between 1 and 200"):
        read_slack_channel(make_ctx(), "general", limit=5000)


def test_posting_by_name_returns_the_permalink(make_ctx, fake):
    reply = post_slack_message(make_ctx(), "#releases", "v1.2 is out")
    assert reply.startswith("Posted to #releases: https://acme.slack.com/archives/C0RELEASE1/p")
    (post,) = fake.posted
    assert post.params["channel"] == "C0RELEASE1" and post.params["text"] == "v1.2 is out"
    assert "thread_ts" not in post.params


def test_posting_in_a_thread(make_ctx, fake):
    post_slack_message(make_ctx(), "C0GENERAL1", "on it", thread_ts="1700000020.000200")
    assert fake.posted[0].params["thread_ts"] == "1700000020.000200"
    assert "reply in thread 1700000020.000200" in read_slack_channel(make_ctx(), "general").display


def test_empty_text_is_a_retry_and_nothing_is_posted(make_ctx, fake):
    with pytest.raises(ModelRetry, match="empty"):
        post_slack_message(make_ctx(), "general", "   ")
    assert fake.posted == []


def test_a_name_on_a_later_page_is_found_by_walking_the_cursor(make_ctx, fake):
    from slack_fake import _channel

    fake.channels += [_channel(f"C0BULK{n:04d}", f"bulk-{n:04d}") for n in range(450)]
    fake.history["C0BULK0449"] = [
        {"type": "message", "user": "U0ADA00001", "text": "last", "ts": "1700000001.000001"}
    ]
    ctx = make_ctx()
    assert "Ada Lovelace: last" in read_slack_channel(ctx, "bulk-0449").display
    assert len(fake.calls("conversations.list")) == 3  # 200 + 200 + 55
    read_slack_channel(ctx, "#bulk-0449")
    assert len(fake.calls("conversations.list")) == 3  # remembered for the session
