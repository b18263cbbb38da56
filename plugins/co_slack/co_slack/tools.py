"""Co's Slack tools. Imported only when the agent is built (it imports pydantic-ai).

Failures a model can act on come back as ``ModelRetry`` with the fix in the message;
those only the user can fix (a revoked token, a missing scope: ``errors.is_fatal``) end
the call as they are, one line for the user; an empty channel or page is a normal result
with ``count=0``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from co_core import ModelRetry, ToolContext, ToolResult
from co_slack import format as fmt
from co_slack.connection import SlackConnection
from co_slack.errors import SlackProblem, is_fatal, problem
from co_slack.identity import USER_ID, resolve
from co_slack.keys import SLACK

MAX_HISTORY = 200
PAGE = 200  # Slack's advice for conversations.history/replies: at most 200 per page
MAX_PAGES = 50
MAX_TEXT = fmt.MAX_TEXT
MAX_USERS = 10


def _slack(ctx: ToolContext) -> SlackConnection:
    return ctx.deps.resource(SLACK)


@contextmanager
def _retry_on_problem() -> Iterator[None]:
    """A Slack failure as a retry the model can act on, or, when only the user can fix
    it, as it is: the call ends with Slack's reason and what to do, in one line."""
    try:
        yield
    except SlackProblem as exc:
        if is_fatal(exc.code):
            raise
        raise ModelRetry(str(exc)) from None


def list_slack_channels(ctx: ToolContext, page: int = 1) -> ToolResult:
    """List the Slack channels the bot sees.

    Args:
        page: 2, 3, ... while has_more.
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


def _ts(ts: Any) -> tuple[int, int]:
    """A Slack ts as (seconds, microseconds): exact, where a float would round."""
    seconds, _, fraction = str(ts).partition(".")
    try:
        return int(seconds), int((fraction + "000000")[:6])
    except ValueError:
        return 0, 0


@dataclass
class Place:
    """Where a read of history or a thread stopped: Slack's cursor, the messages of its
    last page not shown yet, and the ts already shown (replies pages repeat the parent)."""

    cursor: str = ""
    pending: list[dict[str, Any]] = field(default_factory=list)
    more: bool = True  # Slack has pages after ``cursor``
    shown: set[str] = field(default_factory=set)


@dataclass
class Read:
    messages: list[dict[str, Any]]  # in Slack's order: history newest first, a thread oldest
    rest: Place
    has_more: bool
    wait: int | None = None  # Slack asked Co to wait this long before the next page


def _gather(
    slack: SlackConnection,
    method: str,
    limit: int,
    place: Place,
    past: Callable[[dict[str, Any]], bool],
    **params: Any,
) -> Read:
    """Up to ``limit`` messages from ``place`` on, following ``next_cursor`` (a page may
    hold fewer than asked: Slack caps apps outside the Marketplace at 15); ``past(m)``
    ends the read (a message before ``oldest``). Rate-limited after the first page, the
    read stops and keeps what it has (Slack gives such apps one request a minute)."""
    found: list[dict[str, Any]] = []
    pending, cursor, more = list(place.pending), place.cursor, place.more
    shown = set(place.shown)
    for _ in range(MAX_PAGES):
        while pending and len(found) < limit:
            message = pending.pop(0)
            if past(message):
                return Read(found, Place(more=False, shown=shown), False)
            ts = str(message.get("ts"))
            if ts not in shown:
                shown.add(ts)
                found.append(message)
        if len(found) >= limit or not more:
            break
        # Never more than wanted: has_more comes from Slack's cursor, and a read that
        # fits one page (the default limit does, under any workspace's cap) is one request.
        asked = min(PAGE, slack.page_caps.get(method, PAGE), limit - len(found))
        try:
            data = slack.call(method, limit=asked, cursor=cursor or None, **params)
        except SlackProblem as exc:
            if exc.code != "ratelimited" or not found:
                raise
            rest = Place(cursor, pending, more, shown)
            return Read(found, rest, True, exc.retry_after)
        pending = list(data.get("messages") or [])
        cursor = str((data.get("response_metadata") or {}).get("next_cursor") or "")
        more = bool(cursor)
        if more and 0 < len(pending) < asked:  # what this workspace lets one page hold
            slack.page_caps[method] = min(slack.page_caps.get(method, PAGE), len(pending))
    rest = Place(cursor, pending, more, shown)
    following = next((m for m in pending if str(m.get("ts")) not in shown), None)
    has_more = more if following is None else not past(following)
    return Read(found, rest, has_more)


def _latest(
    slack: SlackConnection, about: str, channel_id: str, since: str | None, limit: int, at: Place
) -> Read:
    """The newest ``limit`` messages after ``since`` from ``at`` on (newest first).

    Without ``oldest``/``latest`` Slack pages from the newest message back in time ("The
    most recent messages in the time range are returned first"). Given ``oldest`` alone it
    would instead return "those closest to oldest, allowing you to page forward"
    (https://docs.slack.dev/reference/methods/conversations.history), the *first*
    messages since then, so ``oldest`` is applied here while paging back, not sent.
    """
    floor = _ts(since) if since else None

    def past(message: dict[str, Any]) -> bool:
        return floor is not None and _ts(message.get("ts")) <= floor

    return _gather(slack, "conversations_history", limit, at, past, about=about, channel=channel_id)


def _thread(
    slack: SlackConnection,
    about: str,
    channel_id: str,
    thread_ts: str,
    since: str | None,
    limit: int,
    at: Place,
) -> Read:
    """The thread's next ``limit`` messages (after ``since``) from ``at`` on, oldest first."""
    return _gather(
        slack,
        "conversations_replies",
        limit,
        at,
        lambda _message: False,
        about=about,
        channel=channel_id,
        ts=thread_ts,
        oldest=since,
    )


def _when(slack: SlackConnection, wait: int) -> str:
    """The local time ``wait`` seconds from now, as the user reads a clock."""
    return datetime.fromtimestamp(slack.clock() + wait).strftime("%H:%M:%S")


def read_slack_channel(
    ctx: ToolContext,
    channel: str,
    limit: int = 15,
    oldest: str = "",
    thread_ts: str = "",
    page: int = 1,
) -> ToolResult:
    """Read the latest messages of a Slack channel or DM.

    Args:
        channel: name, id, or @person.
        limit: 1 to 200.
        oldest: a date or Slack ts.
        thread_ts: read this thread's replies.
        page: 2, 3, ... while has_more.
    """
    if not 1 <= limit <= MAX_HISTORY:
        raise ModelRetry(f"limit must be between 1 and {MAX_HISTORY}; you gave {limit}.")
    if page < 1:
        raise ModelRetry("page starts at 1.")
    slack = _slack(ctx)
    thread_ts = thread_ts.strip()
    with _retry_on_problem():
        since = _oldest(oldest)
        channel_id = slack.conversation(resolve(slack, channel))
        key = (channel_id, thread_ts, since or "")
        at = slack.reads.get((*key, page)) if page > 1 else Place()
        if at is None:
            raise ModelRetry(
                f"Page {page} of this read is not available: read page 1 first, and ask for "
                "the next page only while has_more is true."
            )
        if thread_ts:
            read = _thread(slack, channel, channel_id, thread_ts, since, limit, at)
        else:
            read = _latest(slack, channel, channel_id, since, limit, at)
        messages = read.messages if thread_ts else list(reversed(read.messages))
        lines: list[str] = []
        for message in messages:
            lines += fmt.message_lines(message, slack.user_name, slack.label, bool(thread_ts))
    if read.has_more:
        slack.reads[(*key, page + 1)] = read.rest
    where = slack.label(channel_id) + (f", thread {thread_ts}" if thread_ts else "")
    if not messages:
        after = f" after {oldest}" if since else ""
        return ToolResult.empty(f"No messages in {where}{after}.")
    header = f"{where}: {len(messages)} message{'s' if len(messages) != 1 else ''}, oldest first"
    if page > 1:
        header += f" (page {page})"
    if read.has_more:
        which = "later replies" if thread_ts else "older ones"
        after = f" after {oldest}" if since else ""
        if read.wait is not None:
            header += (
                f" ({which}{after} exist: Slack asked Co to wait {read.wait} s before reading "
                f"more, as it limits apps outside the Slack Marketplace; call again with "
                f"page={page + 1} after {_when(slack, read.wait)})"
            )
        else:
            header += f" ({which}{after} exist: call again with page={page + 1})"
    return ToolResult(
        display="\n".join([header, *lines]),
        count=len(messages),
        has_more=read.has_more,
        next_page=page + 1 if read.has_more else None,
        data={"channel": channel_id},
    )


def post_slack_message(ctx: ToolContext, channel: str, text: str, thread_ts: str = "") -> str:
    """Post a Slack message (Markdown) as the bot.

    Args:
        channel: name, id, or @person.
        thread_ts: reply in this thread.
    """
    if not text.strip():
        raise ModelRetry("text is empty; give the message to post.")
    if len(text) > MAX_TEXT:
        raise ModelRetry(f"text is {len(text)} characters; Slack allows {MAX_TEXT}. Shorten it.")
    slack = _slack(ctx)
    with _retry_on_problem():
        channel_id = slack.conversation(resolve(slack, channel))
        try:
            posted = slack.call(
                "chat_postMessage",
                about=channel,
                channel=channel_id,
                markdown_text=text,
                thread_ts=thread_ts.strip() or None,
            )
        except SlackProblem as exc:
            if exc.code != "connection_lost":
                raise
            raise ModelRetry(
                f"The connection to Slack dropped after the message was sent: it may have been "
                f"posted to {slack.label(channel_id)}. Do not post it again before checking "
                "with read_slack_channel."
            ) from None
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


def _person_line(user: dict[str, Any]) -> str:
    profile = user.get("profile") or {}
    name = profile.get("real_name") or user.get("real_name") or user.get("name")
    parts = [f"{name} (@{user.get('name')})", str(user.get("id"))]
    for value in (profile.get("title"), profile.get("email"), user.get("tz")):
        if value:
            parts.append(str(value))
    if user.get("is_bot"):
        parts.append("bot")
    return " · ".join(parts)


def find_slack_user(ctx: ToolContext, query: str) -> ToolResult:
    """Find Slack people by name, handle, email or id."""
    text = query.strip().removeprefix("@")
    if not text:
        raise ModelRetry("query is empty: give a name, handle or email address.")
    slack = _slack(ctx)
    with _retry_on_problem():
        if "@" in text and "." in text.split("@")[-1]:
            try:
                found = [slack.call("users_lookupByEmail", email=text).get("user") or {}]
            except SlackProblem as exc:
                if exc.code != "users_not_found":
                    raise
                found = []
        elif USER_ID.match(text):
            found = [slack.call("users_info", user=text).get("user") or {}]
        else:
            wanted = text.lower()
            found = []
            for user in slack.everyone():
                profile = user.get("profile") or {}
                names = [user.get("name"), user.get("real_name"), profile.get("display_name")]
                if any(wanted in str(n).lower() for n in names if n):
                    found.append(user)
    if not found:
        return ToolResult.empty(f"No Slack user matches {query!r}.")
    shown = found[:MAX_USERS]
    lines = [_person_line(user) for user in shown]
    more = len(found) > len(shown)
    if more:
        lines.append(f"(first {len(shown)} of {len(found)}: give more of the name)")
    return ToolResult(display="\n".join(lines), count=len(shown), has_more=more)


def search_slack(ctx: ToolContext, query: str, limit: int = 20) -> ToolResult:
    """Search Slack messages (needs a user token).

    Args:
        query: e.g. budget in:#finance.
        limit: 1 to 100.
    """
    if not query.strip():
        raise ModelRetry("query is empty: give words to search for.")
    if not 1 <= limit <= 100:
        raise ModelRetry(f"limit must be between 1 and 100; you gave {limit}.")
    slack = _slack(ctx)
    with _retry_on_problem():
        data = slack.call("search_messages", as_user=True, query=query.strip(), count=limit)
        found = data.get("messages") or {}
        lines: list[str] = []
        for match in found.get("matches") or []:
            where = match.get("channel") or {}
            name = where.get("name")
            place = f"#{name}" if name and not str(where.get("id", "")).startswith("D") else "DM"
            message = {**match, "username": match.get("username")}
            for line in fmt.message_lines(message, slack.user_name, slack.label, True):
                lines.append(f"{place}  {line}")
            if match.get("permalink"):
                lines.append(f"    {match['permalink']}")
    total = int(found.get("total") or 0)
    if not lines:
        return ToolResult.empty(f"No Slack messages match {query!r}.")
    count = len(found.get("matches") or [])
    has_more = total > count
    header = f"{count} of {total} messages matching {query!r}"
    return ToolResult(display="\n".join([header, *lines]), count=count, has_more=has_more)
