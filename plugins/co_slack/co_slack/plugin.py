"""co-slack's hooks: Slack messages and channels."""

from __future__ import annotations

from typing import Any

from co_core import hookimpl


@hookimpl
def register_settings(register: Any) -> None:
    from co_slack.settings import SlackSettings

    register("slack", SlackSettings)
