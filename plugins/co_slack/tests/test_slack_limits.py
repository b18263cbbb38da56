"""Reading history under Slack's 2025 limits for apps outside the Marketplace.

Since 29 May 2025 a commercially distributed non-Marketplace app gets
``conversations.history`` and ``conversations.replies`` at 1 request a minute with
``limit`` at most 15 (docs.slack.dev/reference/methods/conversations.history). The fake
enforces both (``limited=True``: HTTP 429 with the seconds left in ``Retry-After``). Co
keeps what it read, says when the next page can be asked for, and does not ask Slack
again before then.
"""

from __future__ import annotations

import re

import pytest
from co_slack.keys import SLACK
from co_slack.tools import read_slack_channel
from pydantic_ai import ModelRetry


class Clock:
    """One clock for Co and the fake, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _channel(fake, count: int, channel: str = "C0RANDOM01", start: int = 1700100000) -> None:
    fake.history[channel] = [
        {"type": "message", "user": "U0ADA00001", "text": f"msg {n}", "ts": f"{start + n}.000100"}
        for n in range(count, 0, -1)
    ]


def _thread(fake, replies: int) -> str:
    parent = "1700000020.000200"
    fake.threads[("C0GENERAL1", parent)] = [
        {
            "type": "message",
            "user": "U0ADA00001",
            "text": f"reply {n}",
            "ts": f"{1700000020 + n}.000300",
        }
        for n in range(1, replies + 1)
    ]
    return parent


@pytest.fixture
def limited(fake, make_ctx):
    clock = Clock()
    fake.limited = True
    fake.clock = clock
    ctx = make_ctx()
    slack = ctx.deps.resource(SLACK)
    slack.clock = clock
    slept: list[float] = []
    slack.sleep = slept.append
    return fake, ctx, clock, slept


def _texts(result, word: str = "msg") -> list[str]:
    return re.findall(rf": ({word} \d+)  \[ts ", result.display)


def test_the_default_read_fits_one_request(limited):
    fake, ctx, _clock, _slept = limited
    _channel(fake, 40)
    result = read_slack_channel(ctx, "random")
    assert result.count == 15 and result.has_more and result.next_page == 2
    assert _texts(result) == [f"msg {n}" for n in range(26, 41)]
    assert len(fake.calls("conversations.history")) == 1
    assert int(fake.calls("conversations.history")[0].params["limit"]) <= 15


def test_a_read_slack_stops_keeps_what_was_read_and_says_when_to_go_on(limited):
    fake, ctx, clock, slept = limited
    _channel(fake, 40)
    first = read_slack_channel(ctx, "random", limit=40)
    assert first.count == 15 and first.has_more and first.next_page == 2
    assert _texts(first) == [f"msg {n}" for n in range(26, 41)]
    assert "page=2" in first.display and "60 s" in first.display
    assert slept == []  # a minute is not slept through inside a call
    assert len(fake.calls("conversations.history")) == 2  # the page, then the 429

    # Too early: Co says when, without asking Slack again.
    clock.now += 30
    with pytest.raises(ModelRetry, match=r"rate limiting Co for 30 s"):
        read_slack_channel(ctx, "random", limit=40, page=2)
    assert len(fake.calls("conversations.history")) == 2

    clock.now += 31
    second = read_slack_channel(ctx, "random", limit=40, page=2)
    assert _texts(second) == [f"msg {n}" for n in range(11, 26)]
    assert second.has_more and second.next_page == 3
    clock.now += 61
    third = read_slack_channel(ctx, "random", limit=40, page=3)
    assert _texts(third) == [f"msg {n}" for n in range(1, 11)]
    assert not third.has_more and third.next_page is None
    # Once Slack has shown it gives 15 a page, Co asks for no more than that.
    asked = [int(r.params["limit"]) for r in fake.calls("conversations.history")]
    assert asked[0] == 40 and max(asked[1:]) <= 15


@pytest.mark.parametrize("limit", [1, 14, 15, 16, 29, 30, 31, 200])
@pytest.mark.parametrize("count", [0, 1, 15, 16, 44])
def test_pages_hold_every_message_once_in_order(limited, limit, count):
    fake, ctx, clock, _slept = limited
    _channel(fake, count)
    seen: list[str] = []
    page = 1
    while True:
        result = read_slack_channel(ctx, "random", limit=limit, page=page)
        seen = _texts(result) + seen  # each page is older than the one before
        if not result.has_more:
            break
        page = result.next_page
        clock.now += 61
        assert page is not None and page < 100
    assert seen == [f"msg {n}" for n in range(1, count + 1)]


def test_oldest_holds_across_pages(limited):
    fake, ctx, clock, _slept = limited
    _channel(fake, 40)
    seen: list[str] = []
    page: int | None = 1
    while page is not None:
        result = read_slack_channel(ctx, "random", limit=40, oldest="1700100010.000100", page=page)
        seen = _texts(result) + seen
        page = result.next_page
        clock.now += 61
    assert seen == [f"msg {n}" for n in range(11, 41)]


def test_a_thread_under_the_limits_is_read_page_by_page(limited):
    fake, ctx, clock, _slept = limited
    parent = _thread(fake, 30)
    first = read_slack_channel(ctx, "general", limit=40, thread_ts=parent)
    assert first.count == 15 and first.has_more and "page=2" in first.display
    assert "Release train leaves Friday" in first.display
    clock.now += 61
    second = read_slack_channel(ctx, "general", limit=40, thread_ts=parent, page=2)
    clock.now += 61
    third = read_slack_channel(ctx, "general", limit=40, thread_ts=parent, page=3)
    replies = [text for r in (first, second, third) for text in _texts(r, "reply")]
    assert replies == [f"reply {n}" for n in range(1, 31)]
    assert "Release train" not in second.display + third.display  # the parent once
    assert not third.has_more


def test_a_page_not_reached_yet_is_a_retry(limited):
    _fake, ctx, _clock, _slept = limited
    with pytest.raises(ModelRetry, match="page 1 first"):
        read_slack_channel(ctx, "random", page=3)


def test_a_workspace_without_limits_reads_it_all_at_once(fake, make_ctx):
    _channel(fake, 40)
    result = read_slack_channel(make_ctx(), "random", limit=40)
    assert result.count == 40 and not result.has_more
    assert len(fake.calls("conversations.history")) == 1
