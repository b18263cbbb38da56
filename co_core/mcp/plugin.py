"""The MCP layer's hooks: its settings sections and one ``co status`` row per server."""

from __future__ import annotations

from co_core.kernel.hookspecs import SettingsRegister, StatusCheckRegister, hookimpl


@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_core.mcp.settings import McpServersSettings, McpSettings

    register("mcp", McpSettings)
    register("mcp_servers", McpServersSettings)


@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    from co_core.mcp.status import register_checks

    register_checks(register)
