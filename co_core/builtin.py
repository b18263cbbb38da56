"""The core's own hook implementations, registered like any plugin's."""

from __future__ import annotations

from typing import Any

from co_core.hookspecs import hookimpl


@hookimpl
def register_settings(register: Any) -> None:
    from co_core.local_settings import LocalSettings
    from co_core.mcp.settings import McpServersSettings, McpSettings
    from co_core.policy.settings import PolicySettings
    from co_core.sessions.settings import SessionSettings
    from co_core.telemetry.settings import TelemetrySettings

    register("local", LocalSettings)
    register("policy", PolicySettings)
    register("mcp", McpSettings)
    register("mcp_servers", McpServersSettings)
    register("sessions", SessionSettings)
    register("telemetry", TelemetrySettings)


@hookimpl
def register_status_checks(register: Any) -> None:
    from co_core import core_checks
    from co_core.policy.status import always_allow_check, policy_check
    from co_core.telemetry.status import traces_check

    register("settings", core_checks.settings_check)
    register("data directory", core_checks.data_dir_check)
    register("policy", policy_check)
    register("always allow", always_allow_check)
    from co_core.mcp.status import register_checks

    register_checks(register)
    register("traces", traces_check)


@hookimpl
def register_commands(app: Any) -> None:
    from co_core import scaffold_cli, undo_commands
    from co_core.mcp import cli as mcp_cli
    from co_core.policy import cli as policy_cli
    from co_core.sessions import cli as sessions_cli
    from co_core.telemetry import cli as telemetry_cli

    policy_cli.register(app)
    undo_commands.register_cli(app)
    mcp_cli.register(app)
    sessions_cli.register(app)
    scaffold_cli.register(app)
    telemetry_cli.register(app)


@hookimpl
def register_slash_commands(register: Any) -> None:
    from co_core import undo_commands

    register("undo", undo_commands.undo_slash, help="revert the last turn's file changes")
    register("changes", undo_commands.changes_slash, help="list this session's file changes")
