"""co-slack's resource key: the session's Slack connection."""

from __future__ import annotations

from typing import TYPE_CHECKING

from co_core import ResourceKey

if TYPE_CHECKING:
    from co_slack.connection import SlackConnection

SLACK: ResourceKey[SlackConnection] = ResourceKey("slack.connection")
