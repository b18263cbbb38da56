"""Channels and messages as the text the model shows the user (pure functions)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

MAX_TEXT = 12_000  # chat.postMessage's limit for markdown_text
MARKUP = re.compile(r"<([^<>]+)>")
TS = re.compile(r"^\d{9,11}(\.\d{1,6})?$")
DATE_TOKENS = re.compile(
    r"\{(date_num|date|date_short|date_long|date_pretty|date_short_pretty"
    r"|date_long_pretty|time|time_secs|ago|day_divider_pretty)\}"
)


def when(ts: str | None) -> str:
    """A Slack ts (``1512085950.000216``) as local ``YYYY-MM-DD HH:MM``."""
    try:
        return datetime.fromtimestamp(float(ts or "")).strftime("%Y-%m-%d %H:%M")
    except (ValueError, OverflowError, OSError):
        return str(ts)


def channel_line(channel: dict[str, Any]) -> str:
    parts = [f"#{channel.get('name', '?')}", str(channel.get("id", "?"))]
    if channel.get("is_private"):
        parts.append("(private)")
    parts.append("[member]" if channel.get("is_member") else "[not a member]")
    if channel.get("num_members") is not None:
        parts.append(f"{channel['num_members']} members")
    line = "  ".join(parts)
    about = (channel.get("topic") or {}).get("value") or (channel.get("purpose") or {}).get("value")
    if about:
        about = " ".join(str(about).split())
        line += f" — {about[:120]}"
    return line


def unescape(text: str) -> str:
    """Slack escapes only ``&``, ``<`` and ``>`` in message text."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _date(command: str, fallback: str) -> str:
    """``<!date^1392734382^{date_short} at {time}|fallback>`` in the user's local time."""
    parts = command.split("^")
    try:
        moment = datetime.fromtimestamp(int(parts[1]))
    except (IndexError, ValueError, OverflowError, OSError):
        return fallback
    fmt = parts[2] if len(parts) > 2 else "{date_short}"

    def token(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "time":
            return f"{moment:%H:%M}"
        if name == "time_secs":
            return f"{moment:%H:%M:%S}"
        return f"{moment:%Y-%m-%d}" if name != "ago" else f"{moment:%Y-%m-%d %H:%M}"

    return DATE_TOKENS.sub(token, fmt)


def message_text(text: str, user_name: Callable[[str], str], label: Callable[[str], str]) -> str:
    """Slack's stored markup as people read it: mentions and channels by name, ``<!here>``,
    links as ``label (url)``, dates in local time, ``&lt;``/``&gt;``/``&amp;`` unescaped."""

    def one(match: re.Match[str]) -> str:
        target, _bar, shown = match.group(1).partition("|")
        if target.startswith("@"):
            return "@" + user_name(target[1:])
        if target.startswith("#"):
            return f"#{shown}" if shown else label(target[1:])
        if target.startswith("!"):
            command = target[1:]
            if command.startswith("date^"):
                return _date(command, shown)
            if command.startswith("subteam^"):
                return shown or "@group"
            return shown or "@" + command.split("^")[0]
        if target.startswith("mailto:"):
            return shown or target.removeprefix("mailto:")
        return f"{shown} ({target})" if shown and shown != target else target

    return unescape(MARKUP.sub(one, text))


def author(message: dict[str, Any], user_name: Callable[[str], str]) -> str:
    if message.get("user"):
        return user_name(message["user"])
    bot = message.get("username") or (message.get("bot_profile") or {}).get("name")
    return f"{bot} (bot)" if bot else "bot" if message.get("bot_id") else "unknown"


def message_lines(
    message: dict[str, Any],
    user_name: Callable[[str], str],
    label: Callable[[str], str],
    in_thread: bool = False,
) -> list[str]:
    """One message, plus (outside a thread) a line saying it starts or belongs to one."""
    ts = str(message.get("ts", ""))
    text = message_text(str(message.get("text") or ""), user_name, label)
    if not text and message.get("files"):
        text = "(file: " + ", ".join(f.get("name", "?") for f in message["files"]) + ")"
    body = "\n    ".join(text.splitlines()) or "(no text)"
    lines = [f"{when(ts)}  {author(message, user_name)}: {body}  [ts {ts}]"]
    if in_thread:
        return lines
    thread_ts = message.get("thread_ts")
    replies = int(message.get("reply_count") or 0)
    if replies:
        last = f", last {when(message.get('latest_reply'))}" if message.get("latest_reply") else ""
        noun = "reply" if replies == 1 else "replies"
        lines.append(f"    ↳ thread: {replies} {noun}{last} (thread_ts {thread_ts or ts})")
    elif thread_ts and thread_ts != ts:
        lines.append(f"    ↳ reply in thread {thread_ts}")
    return lines
