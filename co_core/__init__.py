"""Co's public API: everything a plugin needs, in one namespace (``from co_core import ...``).

Everything else under ``co_core`` (the layers drawn in ARCHITECTURE.md) may change in any
release; ``co_core.testing`` is the other public module, for plugins' tests. Importing
``co_core`` is cheap: each name loads its module on first use, so a plugin's hook module
can import from here without slowing ``co --help`` down.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from co_core.kernel.app import CoApp, current_app
    from co_core.kernel.deps import CHANGES, CoDeps, FileChanges, ResourceKey
    from co_core.kernel.errors import CoError, SettingsError
    from co_core.kernel.hookspecs import (
        HOOKSPEC_VERSION,
        Effect,
        ResourceRegister,
        SettingsRegister,
        SlashCommandRegister,
        SlashHandler,
        StatusCheckRegister,
        ToolRegister,
        hookimpl,
    )
    from co_core.kernel.paths import (
        SymlinkInPath,
        cache_dir,
        config_dir,
        data_dir,
        ensure_dir,
        open_dir_nofollow,
        write_private,
    )
    from co_core.kernel.processes import ProcessId
    from co_core.kernel.results import ToolResult
    from co_core.kernel.settings import SectionModel, Settings, setting
    from co_core.kernel.status import CheckResult, fail, off, ok, warn
    from co_core.kernel.tool_context import ModelRetry, ToolContext
    from co_core.kernel.tools import CallRefused, Resolved, Resolver, Risk, ToolCall, ToolSpec
    from co_core.kernel.visible import escaped, on_screen, unseen
    from co_core.policy.shell import canonical_shell_command
    from co_core.telemetry.spans import span
    from co_core.undo.state import MAX_KEPT_BYTES

_WHERE = {
    "co_core.kernel.app": ("CoApp", "current_app"),
    "co_core.kernel.deps": ("CHANGES", "CoDeps", "FileChanges", "ResourceKey"),
    "co_core.kernel.errors": ("CoError", "SettingsError"),
    "co_core.kernel.hookspecs": (
        "HOOKSPEC_VERSION",
        "Effect",
        "ResourceRegister",
        "SettingsRegister",
        "SlashCommandRegister",
        "SlashHandler",
        "StatusCheckRegister",
        "ToolRegister",
        "hookimpl",
    ),
    "co_core.kernel.paths": (
        "SymlinkInPath",
        "cache_dir",
        "config_dir",
        "data_dir",
        "ensure_dir",
        "open_dir_nofollow",
        "write_private",
    ),
    "co_core.kernel.processes": ("ProcessId",),
    "co_core.kernel.results": ("ToolResult",),
    "co_core.kernel.settings": ("SectionModel", "Settings", "setting"),
    "co_core.kernel.status": ("CheckResult", "fail", "off", "ok", "warn"),
    "co_core.kernel.tool_context": ("ModelRetry", "ToolContext"),
    "co_core.kernel.tools": (
        "CallRefused",
        "Resolved",
        "Resolver",
        "Risk",
        "ToolCall",
        "ToolSpec",
    ),
    "co_core.kernel.visible": ("escaped", "on_screen", "unseen"),
    "co_core.policy.shell": ("canonical_shell_command",),
    "co_core.telemetry.spans": ("span",),
    "co_core.undo.state": ("MAX_KEPT_BYTES",),
}
_MODULE = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "CHANGES",
    "CallRefused",
    "CheckResult",
    "CoApp",
    "CoDeps",
    "CoError",
    "Effect",
    "FileChanges",
    "HOOKSPEC_VERSION",
    "MAX_KEPT_BYTES",
    "ModelRetry",
    "ProcessId",
    "Resolved",
    "Resolver",
    "ResourceKey",
    "ResourceRegister",
    "Risk",
    "SectionModel",
    "Settings",
    "SettingsError",
    "SettingsRegister",
    "SlashCommandRegister",
    "SlashHandler",
    "StatusCheckRegister",
    "SymlinkInPath",
    "ToolCall",
    "ToolContext",
    "ToolRegister",
    "ToolResult",
    "ToolSpec",
    "cache_dir",
    "canonical_shell_command",
    "config_dir",
    "current_app",
    "data_dir",
    "ensure_dir",
    "escaped",
    "fail",
    "hookimpl",
    "off",
    "ok",
    "on_screen",
    "open_dir_nofollow",
    "setting",
    "span",
    "unseen",
    "warn",
    "write_private",
]


def __getattr__(name: str) -> Any:
    module = _MODULE.get(name)
    if module is None:
        raise AttributeError(f"module 'co_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return __all__
