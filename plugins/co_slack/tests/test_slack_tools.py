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


def test_oldest_and_limit(make_ctx, fake):
    ctx = make_ctx()
    newer = read_slack_channel(ctx, "C0GENERAL1", oldest="1700000015")
    assert newer.count == 2 and "Good morning" not in newer.display
    assert not newer.has_more

    latest = read_slack_channel(ctx, "general", limit=1)
    assert latest.count == 1 and latest.has_more
    assert "Thanks @grace" in latest.display  # the newest one
    assert "older ones exist" in latest.display


def test_oldest_as_an_iso_date(make_ctx, fake):
    ctx = make_ctx()
    assert read_slack_channel(ctx, "general", oldest="2000-01-01").count == 3
    since = read_slack_channel(ctx, "general", oldest="2023-11-14T22:13:35Z")
    assert since.count == 2 and "Good morning" not in since.display
    at_oldest = read_slack_channel(ctx, "general", oldest="1700000010.000100")
    assert at_oldest.count == 2  # a message at exactly `oldest` is not after it


def _busy(fake, channel: str = "C0RANDOM01", count: int = 60, start: int = 1700100000) -> None:
    """``count`` messages, one a minute after ``start``, and one from the week before."""
    fake.history[channel] = [
        {
            "type": "message",
            "user": "U0ADA00001",
            "text": f"msg {n}",
            "ts": f"{start + 60 * n}.000100",
        }
        for n in range(count, 0, -1)
    ] + [{"type": "message", "user": "U0ADA00001", "text": "last week", "ts": "1699500000.000100"}]


def test_since_monday_shows_the_latest_messages_not_mondays_first(make_ctx, fake):
    """Slack answers `oldest` alone with the messages closest to it; "since Monday, 20"
    in a busy channel must still be the 20 latest, with the older ones announced."""
    _busy(fake)
    result = read_slack_channel(make_ctx(), "random", limit=20, oldest="1700100000")
    lines = result.display.splitlines()
    assert result.count == 20 and result.has_more
    assert "msg 60" in lines[-1] and "msg 41" in lines[1]  # oldest first, ending at the newest
    assert "msg 40" not in result.display
    assert "(older ones after 1700100000 exist: call again with page=2)" in lines[0]


def test_since_monday_with_room_for_all_says_nothing_is_missing(make_ctx, fake):
    _busy(fake, count=12)
    result = read_slack_channel(make_ctx(), "random", limit=20, oldest="1700100000")
    assert result.count == 12 and not result.has_more and "last week" not in result.display


def test_history_follows_the_cursor_when_slack_answers_in_short_pages(make_ctx, fake):
    """Apps outside the Marketplace get at most 15 messages a call: Co pages for more."""
    _busy(fake)
    fake.max_page = 15
    result = read_slack_channel(make_ctx(), "random", limit=40)
    assert result.count == 40 and result.has_more
    assert "msg 21" in result.display and "msg 20" not in result.display
    calls = fake.calls("conversations.history")
    assert len(calls) == 3 and "cursor" not in calls[0].params
    assert calls[1].params["cursor"] and calls[2].params["cursor"]


def test_a_long_thread_is_read_page_by_page_up_to_the_limit(make_ctx, fake):
    fake.max_page = 7
    key = ("C0GENERAL1", "1700000020.000200")
    fake.threads[key] = [
        {
            "type": "message",
            "user": "U0ADA00001",
            "text": f"reply {n}",
            "ts": f"{1700000020 + n}.000300",
        }
        for n in range(1, 31)
    ]
    result = read_slack_channel(make_ctx(), "general", limit=25, thread_ts="1700000020.000200")
    assert result.count == 25 and result.has_more
    assert "Release train leaves Friday" in result.display  # the thread's first message
    assert "reply 24" in result.display and "reply 25" not in result.display
    assert "(later replies exist" in result.display
    assert len(fake.calls("conversations.replies")) == 4


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


@pytest.mark.parametrize("typed", ["GENERAL2024", "General2024", "#GENERAL2024", "C0GEN2024X"])
def test_a_name_shaped_like_an_id_is_found_by_name(make_ctx, fake, typed):
    """GENERAL2024 has the shape of an id (a type letter, capitals, digits): Slack does
    not know it as one, so it is looked up as the channel #general2024."""
    from slack_fake import _channel

    fake.channels.append(_channel("C0GEN2024X", "general2024"))
    fake.history["C0GEN2024X"] = [
        {"type": "message", "user": "U0ADA00001", "text": "new year", "ts": "1700000001.000001"}
    ]
    result = read_slack_channel(make_ctx(), typed)
    assert result.display.startswith("#general2024: 1 message") and "new year" in result.display
    assert {c.params["channel"] for c in fake.calls("conversations.history")} == {"C0GEN2024X"}


def test_a_user_shaped_channel_name_is_not_taken_for_a_person(make_ctx, fake):
    from slack_fake import _channel

    fake.channels.append(_channel("C0UPD20240", "updates2024"))
    result = read_slack_channel(make_ctx(), "UPDATES2024")
    assert result.count == 0 and "#updates2024" in result.display
    assert fake.calls("conversations.open") == []
