"""Channels and messages as the text the model shows the user (pure functions)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
CHANNEL_LINK = re.compile(r"<#([CGD][A-Z0-9]+)(?:\|([^>]*))?>")
TS = re.compile(r"^\d{9,11}(\.\d{1,6})?$")


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


def message_text(text: str, user_name: Callable[[str], str], label: Callable[[str], str]) -> str:
    """Slack markup for mentions (``<@U123>``, ``<#C123|general>``) as readable names."""
    text = MENTION.sub(lambda m: "@" + user_name(m.group(1)), text)
    return CHANNEL_LINK.sub(lambda m: "#" + m.group(2) if m.group(2) else label(m.group(1)), text)


def author(message: dict[str, Any], user_name: Callable[[str], str]) -> str:
    if message.get("user"):
        return user_name(message["user"])
    bot = message.get("username") or (message.get("bot_profile") or {}).get("name")
    return f"{bot} (bot)" if bot else "bot" if message.get("bot_id") else "unknown"


def message_lines(
    message: dict[str, Any], user_name: Callable[[str], str], label: Callable[[str], str]
) -> list[str]:
    """One message, plus a line saying it starts or belongs to a thread."""
    ts = str(message.get("ts", ""))
    text = message_text(str(message.get("text") or ""), user_name, label)
    if not text and message.get("files"):
        text = "(file: " + ", ".join(f.get("name", "?") for f in message["files"]) + ")"
    body = "\n    ".join(text.splitlines()) or "(no text)"
    lines = [f"{when(ts)}  {author(message, user_name)}: {body}  [ts {ts}]"]
    thread_ts = message.get("thread_ts")
    replies = int(message.get("reply_count") or 0)
    if replies:
        last = f", last {when(message.get('latest_reply'))}" if message.get("latest_reply") else ""
        noun = "reply" if replies == 1 else "replies"
        lines.append(f"    ↳ thread: {replies} {noun}{last} (thread_ts {thread_ts or ts})")
    elif thread_ts and thread_ts != ts:
        lines.append(f"    ↳ reply in thread {thread_ts}")
    return lines
