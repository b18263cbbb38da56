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
    assert post.params["channel"] == "C0RELEASE1" and post.params["markdown_text"] == "v1.2 is out"
    assert "thread_ts" not in post.params


def test_posting_in_a_thread_and_reading_the_thread(make_ctx, fake):
    ctx = make_ctx()
    post_slack_message(ctx, "C0GENERAL1", "on it", thread_ts="1700000020.000200")
    assert fake.posted[0].params["thread_ts"] == "1700000020.000200"
    thread = read_slack_channel(ctx, "general", thread_ts="1700000020.000200")
    assert thread.count == 4 and thread.display.endswith(
        "cobot (bot): on it  [ts 1700000101.000100]"
    )


def test_a_thread_is_read_with_conversations_replies_oldest_first(make_ctx, fake):
    result = read_slack_channel(make_ctx(), "#general", thread_ts="1700000020.000200")
    lines = result.display.splitlines()
    assert lines[0] == "#general, thread 1700000020.000200: 3 messages, oldest first"
    assert "grace: Release train leaves Friday" in lines[1]
    assert "Ada Lovelace: Which platform?" in lines[2]
    assert "Ada Lovelace: Never mind, platform 9 & ¾" in lines[3]
    (call,) = fake.calls("conversations.replies")
    assert call.params["channel"] == "C0GENERAL1" and call.params["ts"] == "1700000020.000200"


def test_slack_markup_is_shown_as_people_read_it(make_ctx, fake):
    fake.history["C0RANDOM01"] = [
        {
            "type": "message",
            "user": "U0ADA00001",
            "text": "if a &lt; b &amp;&amp; c &gt; d <!here> read <https://x.test/a?b=1&amp;c=2|the docs>"
            " or <https://y.test> or <mailto:ops@acme.test|ops@acme.test>, ask <!subteam^S0DEVS|@devs>"
            " <!channel> by <!date^1700000000^{date_short} at {time}|Nov 14th> in <#C0GENERAL1>",
            "ts": "1700000050.000100",
        }
    ]
    from co_slack.format import when

    text = read_slack_channel(make_ctx(), "random").display
    assert "if a < b && c > d @here read the docs (https://x.test/a?b=1&c=2)" in text
    assert "or https://y.test or ops@acme.test, ask @devs @channel" in text
    day, hour = when("1700000000").split()
    assert f"by {day} at {hour} in #general" in text
    assert "&lt;" not in text and "&amp;" not in text and "<" not in text.replace("a < b", "")


def test_a_channel_name_in_capitals_is_a_name_not_an_id(make_ctx, fake):
    from slack_fake import _channel

    fake.channels.append(_channel("C0CUSTOM01", "customers"))
    fake.history["C0CUSTOM01"] = [
        {"type": "message", "user": "U0ADA00001", "text": "renewals due", "ts": "1700000001.000001"}
    ]
    ctx = make_ctx()
    assert "renewals due" in read_slack_channel(ctx, "CUSTOMERS").display
    assert "renewals due" in read_slack_channel(ctx, "#Customers").display
    assert {c.params["channel"] for c in fake.calls("conversations.history")} == {"C0CUSTOM01"}


def test_markdown_is_sent_as_slack_formatting(make_ctx, fake):
    text = "**Release 1.2** is out:\n- faster search\n- see [the notes](https://x.test/notes)"
    post_slack_message(make_ctx(), "releases", text)
    (post,) = fake.posted
    assert post.params["markdown_text"] == text and "text" not in post.params


def test_short_and_empty_pages_are_followed_to_the_channels(make_ctx, fake):
    """Slack pages before it drops archived channels: a page may be empty with a cursor."""
    from slack_fake import _channel

    old = [_channel(f"C0OLD{n:05d}", f"old-{n}", archived=True) for n in range(250)]
    fake.channels = old + fake.channels
    result = list_slack_channels(make_ctx())
    assert result.count == 5 and not result.has_more
    assert "#general" in result.display and "old-" not in result.display
    assert len(fake.calls("conversations.list")) == 3


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
