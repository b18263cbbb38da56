"""co-slack's hooks: Slack messages and channels.

Kept light: slack_sdk and pydantic-ai load only when a tool or check actually runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from co_core import hookimpl
from co_slack.keys import SLACK

if TYPE_CHECKING:
    import typer

    from co_core import (
        ResourceRegister,
        Role,
        Settings,
        SettingsRegister,
        StatusCheckRegister,
        ToolRegister,
    )


@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_slack.settings import SlackSettings

    register("slack", SlackSettings)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    tools = "co_slack.tools"
    register(f"{tools}:list_slack_channels", risk="read", permission="slack:list", does="lists")
    # Keys name a channel as #name and a person as @handle(USER_ID), however they were
    # typed; the tool gets the id (co_slack.targets).
    register(
        f"{tools}:read_slack_channel",
        risk="read",
        permission="slack:read:{channel}",
        resolve="co_slack.targets:read_target",
        does="reads",
        roles={"channel": "target"},
    )
    register(
        f"{tools}:post_slack_message",
        risk="send",
        permission="slack:post:{channel}",
        resolve="co_slack.targets:post_target",
        does="sends",
        roles={"channel": "target", "text": "text"},
    )
    query: dict[str, Role] = {"query": "query"}
    register(
        f"{tools}:find_slack_user",
        risk="read",
        permission="slack:users",
        does="searches",
        roles=query,
    )
    register(
        f"{tools}:search_slack",
        risk="read",
        permission="slack:search",
        does="searches",
        roles=query,
    )


@hookimpl
def register_deps(register: ResourceRegister) -> None:
    from co_slack.connection import make_connection

    register(SLACK, make_connection)


@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    from co_slack.status import CHECK_TIMEOUT, slack_check

    register("slack", slack_check, timeout=CHECK_TIMEOUT + 1)


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from co_slack.cli import add_commands

    add_commands(app)


# docs: plugin_ready
@hookimpl
def plugin_ready(settings: Settings) -> str | None:
    # The token's presence only; whether Slack accepts it is `co status`'s question.
    from co_slack.settings import SlackSettings
    from co_slack.token import TokenError, resolve

    try:
        token = resolve(settings.section(SlackSettings), settings.sources.get("slack.bot_token"))
    except TokenError as exc:
        return str(exc)
    if token is None:
        return "Slack is not connected: run `co slack login` (or set SLACK_BOT_TOKEN)"
    return None


# /docs
