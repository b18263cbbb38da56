"""Slack API failures as one actionable sentence, for the model and for the user.

The message is built from Slack's error code and documented fields only (never from the
request), so a token cannot leak through it.
"""

from __future__ import annotations

from typing import Any

from co_core import CoError

AUTH_ERRORS = {"invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive"}


class SlackProblem(CoError):
    """A Slack call failed; ``code`` is Slack's error code (or ours: ``unreachable``, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def hint(code: str, data: dict[str, Any], channel: str | None = None) -> str:
    """What went wrong and what to do next, for one Slack error code."""
    where = f" {channel!r}" if channel else ""
    if code == "channel_not_found":
        return (
            f"Slack has no channel{where} that the bot can see. Call list_slack_channels and "
            "use a channel name from it (like general) or its id (like C012AB3CD)."
        )
    if code == "not_in_channel":
        return (
            f"The bot is not a member of channel{where}. Ask the user to invite it "
            "(type `/invite @<bot name>` in that channel), or use a channel that "
            "list_slack_channels marks as [member]."
        )
    if code in AUTH_ERRORS:
        return (
            f"Slack rejected the bot token ({code}). Do not retry: tell the user to run "
            "`co slack login` with a valid bot token (xoxb-…) or fix SLACK_BOT_TOKEN."
        )
    if code == "missing_scope":
        needed = data.get("needed") or "an extra scope"
        provided = data.get("provided") or "none"
        return (
            f"The Slack app lacks the OAuth scope {needed} (it has: {provided}). Do not "
            f"retry: tell the user to add {needed} under OAuth & Permissions in the app's "
            "settings at api.slack.com/apps and reinstall the app."
        )
    if code == "is_archived":
        return f"Channel{where} is archived; nothing can be posted there. Pick another channel."
    if code in ("thread_not_found", "message_not_found"):
        return (
            "No message has that thread_ts in this channel. Use the ts of the thread's first "
            "message as read_slack_channel shows it, or leave thread_ts out."
        )
    if code in ("invalid_ts_oldest", "invalid_ts_latest"):
        return "oldest must be a Slack timestamp like 1512085950.000216 or a date like 2026-11-20."
    if code == "msg_too_long":
        return "The message is too long for Slack (12,000 characters at most). Shorten it."
    if code == "no_text":
        return "The message text is empty. Give the text to post."
    if code == "ratelimited":
        wait = data.get("retry_after")
        after = f" for {wait} s" if wait else ""
        cap = data.get("max_wait")
        limit = f" (Co waits at most {cap} s by itself)" if cap is not None and wait else ""
        return (
            f"Slack is rate limiting Co{after}{limit}. Wait before calling Slack again; "
            "tell the user if they are waiting."
        )
    if code == "unreachable":
        return str(data.get("detail") or "Slack could not be reached.")
    if code == "connection_lost":
        detail = str(data.get("detail") or "Slack could not be reached.")
        return f"{detail} The connection dropped before Slack answered."
    if code in ("user_not_found", "users_not_found"):
        return (
            f"Slack has no person{where} the bot can see. Use find_slack_user to look them up "
            "by name or email."
        )
    if code == "not_allowed_token_type":
        return (
            "Slack refused the token type for this call (search needs a user token, xoxp-…). "
            "Do not retry: tell the user to set SLACK_USER_TOKEN."
        )
    return f"Slack refused the call ({code})."


def problem(
    code: str, data: dict[str, Any] | None = None, channel: str | None = None
) -> SlackProblem:
    return SlackProblem(code, hint(code, data or {}, channel))


def is_fatal(code: str) -> bool:
    """Codes the model cannot fix by calling differently (the user has to act)."""
    return code in AUTH_ERRORS or code in (
        "missing_scope",
        "not_connected",
        "unreachable",
        "no_user_token",
        "not_allowed_token_type",
    )
