"""Co's Slack tools. Imported only when the agent is built (it imports pydantic-ai).

Failures a model can act on come back as ``ModelRetry`` with the fix in the message;
an empty channel or page is a normal result with ``count=0``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from pydantic_ai import ModelRetry, RunContext

from co_core import CoDeps, ToolResult
from co_slack import format as fmt
from co_slack.connection import SlackConnection
from co_slack.errors import SlackProblem, problem

MAX_HISTORY = 200
MAX_TEXT = 40_000


def _slack(ctx: RunContext[CoDeps]) -> SlackConnection:
    return ctx.deps.resource("slack")


@contextmanager
def _retry_on_problem() -> Iterator[None]:
    try:
        yield
    except SlackProblem as exc:
        raise ModelRetry(str(exc)) from None


def list_slack_channels(ctx: RunContext[CoDeps], page: int = 1) -> ToolResult:
    """List the Slack channels the bot can see, one page at a time (page 1 first).

    Each line shows the channel name, its id, whether the bot is a member (it can only
    read and post where it is), and the topic. If has_more is true, call again with
    page + 1.
    """
    if page < 1:
        raise ModelRetry("page starts at 1; call list_slack_channels(page=1) for the first page.")
    slack = _slack(ctx)
    with _retry_on_problem():
        channels, has_more = slack.channels_page(page)
    if not channels:
        message = "No channels visible to the bot." if page == 1 else f"No channels on page {page}."
        return ToolResult.empty(message)
    lines = [fmt.channel_line(c) for c in channels]
    if has_more:
        lines.append(f"(more channels: call list_slack_channels(page={page + 1}))")
    return ToolResult(
        display="\n".join(lines),
        count=len(channels),
        has_more=has_more,
        next_page=page + 1 if has_more else None,
    )


def _oldest(value: str | None) -> str | None:
    """A Slack ts from a ts, a Unix time or an ISO date/time (local time if no zone)."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    if fmt.TS.match(text):
        return text
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise problem("invalid_ts_oldest") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return f"{moment.timestamp():.6f}"


def read_slack_channel(
    ctx: RunContext[CoDeps], channel: str, limit: int = 20, oldest: str | None = None
) -> ToolResult:
    """Read the latest messages of a Slack channel, shown oldest first.

    channel: a name (general or #general) or an id (C012AB3CD).
    limit: how many messages, 1 to 200.
    oldest: only messages after this: a date like 2026-11-20, a date-time, or a Slack ts.
    Messages that start a thread say how many replies it has and its thread_ts.
    """
    if not 1 <= limit <= MAX_HISTORY:
        raise ModelRetry(f"limit must be between 1 and {MAX_HISTORY}; you gave {limit}.")
    slack = _slack(ctx)
    with _retry_on_problem():
        since = _oldest(oldest)
        channel_id = slack.channel_id(channel)
        data = slack.call(
            "conversations_history", about=channel, channel=channel_id, limit=limit, oldest=since
        )
        messages = list(reversed(data.get("messages") or []))
        lines: list[str] = []
        for message in messages:
            lines += fmt.message_lines(message, slack.user_name, slack.label)
    where = slack.label(channel_id)
    if not messages:
        after = f" after {oldest}" if since else ""
        return ToolResult.empty(f"No messages in {where}{after}.")
    has_more = bool(data.get("has_more"))
    header = f"{where}: {len(messages)} message{'s' if len(messages) != 1 else ''}, oldest first"
    if has_more:
        header += f" (older ones exist: raise limit, up to {MAX_HISTORY})"
    return ToolResult(
        display="\n".join([header, *lines]),
        count=len(messages),
        has_more=has_more,
        data={"channel": channel_id},
    )


def post_slack_message(
    ctx: RunContext[CoDeps], channel: str, text: str, thread_ts: str | None = None
) -> str:
    """Post a message to a Slack channel as the bot; returns a link to the message.

    channel: a name (general or #general) or an id (C012AB3CD).
    thread_ts: to reply in a thread, the thread_ts read_slack_channel showed.
    """
    if not text.strip():
        raise ModelRetry("text is empty; give the message to post.")
    if len(text) > MAX_TEXT:
        raise ModelRetry(f"text is {len(text)} characters; Slack allows {MAX_TEXT}. Shorten it.")
    slack = _slack(ctx)
    with _retry_on_problem():
        channel_id = slack.channel_id(channel)
        posted = slack.call(
            "chat_postMessage",
            about=channel,
            channel=channel_id,
            text=text,
            thread_ts=thread_ts or None,
        )
        ts = str(posted.get("ts", ""))
        channel_id = str(posted.get("channel") or channel_id)
        try:
            link = slack.call("chat_getPermalink", channel=channel_id, message_ts=ts).get(
                "permalink"
            )
        except SlackProblem:
            link = None  # the message is posted; a missing link is no reason to post again
    where = slack.label(channel_id)
    if link:
        return f"Posted to {where}: {link}"
    return f"Posted to {where} (ts {ts}); Slack gave no link to it."
