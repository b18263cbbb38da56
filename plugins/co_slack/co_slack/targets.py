"""What a co-slack call will really touch, for its permission key (``resolve=``).

``general``, ``#General``, ``GENERAL``, ``<#C0123|general>`` and ``C0123`` are one channel:
the key names it once, as ``#name`` (``@handle`` for a person's direct messages), and the
tool then reads or posts to exactly that channel.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from co_core import CallRefused, CoDeps, Resolved
from co_slack.keys import SLACK


def channel(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    from co_slack.connection import canonical_channel
    from co_slack.errors import SlackProblem

    typed = args.get("channel")
    if not isinstance(typed, str) or not typed.strip():
        raise CallRefused("channel must be a channel name such as #general, or @person")
    try:
        name = canonical_channel(deps.resource(SLACK), typed)
    except SlackProblem as exc:
        raise CallRefused(f"cannot tell which channel {typed!r} is: {exc}") from exc
    return Resolved({**args, "channel": name})
