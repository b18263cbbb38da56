"""What a co-slack call will really touch, for its permission key (``resolve=``).

``general``, ``#General``, ``<#C0123|general>`` and ``C0123`` are one channel, keyed
``slack:post:#general``; a person is keyed by handle and Slack user id,
``slack:post:@grace(U0123)``, so a rule or an "always" for one person never covers another
who shares their name. The tool is handed ``#general(C0123)`` or ``@grace(U0123)`` and
uses the id in it: it reads or posts to exactly what was decided
(:mod:`co_slack.identity`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from co_core import CallRefused, CoDeps, Resolved
from co_slack.keys import SLACK


def _resolved(args: Mapping[str, Any], deps: CoDeps, verb: str) -> Resolved:
    from co_slack.errors import SlackProblem, is_fatal
    from co_slack.identity import resolve

    typed = args.get("channel")
    if not isinstance(typed, str) or not typed.strip():
        raise CallRefused("channel must be a channel name such as #general, or @person")
    try:
        target = resolve(deps.resource(SLACK), typed)
    except SlackProblem as exc:
        if is_fatal(exc.code):  # only the user can fix it: the call ends with why
            raise
        raise CallRefused(f"cannot tell which channel or person {typed!r} is: {exc}") from exc
    return Resolved({**args, "channel": target.arg}, (f"slack:{verb}:{target.key}",))


def read_target(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    """``read_slack_channel``: ``slack:read:#general`` or ``slack:read:@grace(U0123)``."""
    return _resolved(args, deps, "read")


def post_target(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    """``post_slack_message``: ``slack:post:#general`` or ``slack:post:@grace(U0123)``.
    A text Slack would refuse is refused now, not after the user approved it."""
    from co_slack.format import MAX_TEXT

    text = str(args.get("text") or "")
    if len(text) > MAX_TEXT:
        raise CallRefused(f"text is {len(text)} characters; Slack allows {MAX_TEXT}. Shorten it.")
    return _resolved(args, deps, "post")
