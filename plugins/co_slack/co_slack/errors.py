"""Slack API failures as one actionable sentence, for the model and for the user.

The message is built from Slack's error code and documented fields only (never from the
request), so a token cannot leak through it.

Errors only the user (or a workspace admin) can fix are *fatal* (:func:`is_fatal`): the
tools raise them as they are, a ``CoError``, so the call ends with one line the user
reads, instead of asking the model to try again. An authentication error names the
token that failed (the bot token, or the user token ``search_slack`` needs) and how to
give that one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from co_core import CoError

AUTH_ERRORS = {"invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive"}
# Slack's own explanations (the Errors tables of https://docs.slack.dev/reference/methods/)
# of the errors the user or a workspace admin must fix.
EXPLAINED = {
    "invalid_auth": "the token is invalid, or the request comes from an IP address the "
    "workspace does not allow",
    "not_authed": "no authentication token was provided",
    "token_revoked": "the token is for a deleted user or workspace, or the app has been removed",
    "token_expired": "the token has expired",
    "account_inactive": "the token is for a deleted user or workspace",
    "no_permission": "the token does not have the permissions this needs (is the app a member "
    "of the conversation?)",
    "ekm_access_denied": "administrators have suspended this",
    "team_access_not_granted": "the token is not granted access to this workspace",
    "access_denied": "access to something the request names is denied",
    "not_allowed_token_type": "this token type is not allowed for this method",
    "org_login_required": "the workspace is being migrated to an Enterprise organization and is "
    "unavailable until that is done",
    "team_added_to_org": "the workspace is being migrated to an Enterprise organization; the "
    "API is intermittently unavailable until that is done",
    "two_factor_setup_required": "two-factor authentication must be set up first",
    "enterprise_is_restricted": "this method cannot be called from an Enterprise",
    "accesslimited": "access to this method is limited on the current network",
}
FATAL = (
    AUTH_ERRORS
    | set(EXPLAINED)
    | {"missing_scope", "not_connected", "unreachable", "no_user_token"}
)


@dataclass(frozen=True)
class TokenUsed:
    """Which token a call used: ``bot`` or ``user``, and where Co found it."""

    kind: str
    source: str = ""


class SlackProblem(CoError):
    """A Slack call failed; ``code`` is Slack's error code (or ours: ``unreachable``, ...);
    ``retry_after``: the seconds a rate limit asks to wait, when Slack said."""

    def __init__(self, code: str, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.retry_after = retry_after


def _how_to_give(token: TokenUsed) -> str:
    """How the user replaces the token that failed, wherever it came from."""
    if token.kind == "user":
        where = "SLACK_USER_TOKEN" if "SLACK_USER_TOKEN" in token.source else ""
        fix = (
            "set SLACK_USER_TOKEN to a valid one"
            if where
            else "set SLACK_USER_TOKEN or run `co config set slack.user_token xoxp-…`"
        )
        return (
            "search_slack needs a user token (xoxp-…) with the search:read scope, which "
            f"`co slack login` does not store: {fix}."
        )
    if "SLACK_BOT_TOKEN" in token.source:
        return (
            "Set SLACK_BOT_TOKEN to a valid bot token (xoxb-…), or unset it and run "
            "`co slack login` (while it is set, the login is not used)."
        )
    if "settings" in token.source:
        return (
            "Run `co config set slack.bot_token xoxb-…` with a valid bot token, or remove "
            "slack.bot_token and run `co slack login`."
        )
    return "Run `co slack login` with a valid bot token (xoxb-…)."


def _auth_hint(code: str, token: TokenUsed | None) -> str:
    token = token or TokenUsed("bot")
    which = "user token" if token.kind == "user" else "bot token"
    source = f" from {token.source}" if token.source else ""
    why = EXPLAINED.get(code, "")
    return f"Slack rejected the {which}{source} ({code}: {why}). {_how_to_give(token)}"


def hint(
    code: str, data: dict[str, Any], channel: str | None = None, token: TokenUsed | None = None
) -> str:
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
        return _auth_hint(code, token)
    if code == "missing_scope":
        which = "user token" if token is not None and token.kind == "user" else "Slack app"
        needed = data.get("needed")
        scope = f"the OAuth scope {needed}" if needed else "an OAuth scope this call needs"
        has = f"; it has: {data['provided']}" if data.get("provided") else ""
        return (
            f"The {which} lacks {scope} (missing_scope{has}): add {needed or 'it'} under "
            "OAuth & Permissions in the app's settings at api.slack.com/apps and reinstall "
            "the app."
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
            f"Slack refused the token type for this call ({code}: "
            f"{EXPLAINED[code]}). {_how_to_give(TokenUsed('user'))}"
        )
    if code in EXPLAINED:
        return f"Slack refused the call ({code}: {EXPLAINED[code]})."
    return f"Slack refused the call ({code})."


def problem(
    code: str,
    data: dict[str, Any] | None = None,
    channel: str | None = None,
    token: TokenUsed | None = None,
) -> SlackProblem:
    data = data or {}
    wait = data.get("retry_after") if code == "ratelimited" else None
    return SlackProblem(code, hint(code, data, channel, token), wait)


def is_fatal(code: str) -> bool:
    """Codes the model cannot fix by calling differently: the user has to act."""
    return code in FATAL
