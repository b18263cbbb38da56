"""``co status``: is the Slack token accepted, and for which workspace and bot?"""

from __future__ import annotations

from typing import Any

from co_core import CheckResult, Settings, fail, off, ok
from co_slack.errors import AUTH_ERRORS, SlackProblem, TokenUsed
from co_slack.token import TokenError, resolve

CHECK_TIMEOUT = 3


def who(auth: dict[str, Any]) -> str:
    """auth.test's answer as ``workspace Acme (acme.slack.com) as @cobot``."""
    host = str(auth.get("url") or "").removeprefix("https://").rstrip("/")
    team = auth.get("team") or auth.get("team_id") or "?"
    place = f"workspace {team}" + (f" ({host})" if host else "")
    return f"{place} as @{auth.get('user') or auth.get('user_id') or '?'}"


def auth_test(
    token: str, settings: Settings, timeout: int = CHECK_TIMEOUT, source: str = ""
) -> dict[str, Any]:
    """auth.test with ``token`` (found at ``source``, named if Slack rejects it)."""
    from co_slack.connection import build_client, call_api

    client = build_client(
        token,
        settings.section("slack"),
        timeout=timeout,
        rate_limit_retries=0,
        connection_retries=0,
    )
    return call_api(client, "auth_test", token=TokenUsed("bot", source))


def slack_check(settings: Settings) -> CheckResult:
    section = settings.section("slack")
    try:
        token = resolve(section, settings.sources.get("slack.bot_token"))
    except TokenError as exc:
        return fail(str(exc))
    if token is None:
        return off("no token (run `co slack login` or set SLACK_BOT_TOKEN)")
    try:
        auth = auth_test(token.value, settings, source=token.source)
    except SlackProblem as exc:
        if exc.code in AUTH_ERRORS:  # the message names the token and how to replace it
            return fail(str(exc))
        return fail(f"{exc.code}: token from {token.source} — {exc}")
    return ok(f"{who(auth)} (token from {token.source})")
