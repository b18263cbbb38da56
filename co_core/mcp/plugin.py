"""The MCP layer's hooks: its settings sections, one ``co status`` row per server, and the
session's MCP servers as the agent's tool sources (a resource: started once, closed at exit)."""

from __future__ import annotations

from typing import Any

from co_core.kernel.hookspecs import (
    ResourceRegister,
    SettingsRegister,
    StatusCheckRegister,
    hookimpl,
)


@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_core.mcp.settings import McpServersSettings, McpSettings

    register("mcp", McpSettings)
    register("mcp_servers", McpServersSettings)


@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    from co_core.mcp.status import register_checks

    register_checks(register)


def _servers(settings: Any, deps: Any) -> Any:
    from co_core.mcp.servers import session_servers

    return session_servers(settings, deps)


@hookimpl
def register_deps(register: ResourceRegister) -> None:
    from co_core.agent.assembly.sources import TOOL_SOURCES

    register(TOOL_SOURCES, _servers)
