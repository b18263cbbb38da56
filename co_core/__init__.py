"""Co's core: the public API plugins build on.

Importing ``co_core`` is cheap; the agent-side names (``CoDeps``) load on first use so a
plugin's hook module can import from here without slowing ``co --help`` down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from co_core.errors import CoError, SettingsError
from co_core.hookspecs import HOOKSPEC_VERSION, hookimpl
from co_core.results import ToolResult
from co_core.status import CheckResult, fail, off, ok, warn
from co_core.tools import Risk, ToolCall, ToolSpec

if TYPE_CHECKING:
    from co_core.settings import SectionModel, Settings, current_settings, setting

__all__ = [
    "HOOKSPEC_VERSION",
    "CheckResult",
    "CoError",
    "Risk",
    "SectionModel",
    "Settings",
    "SettingsError",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "current_settings",
    "fail",
    "hookimpl",
    "off",
    "ok",
    "setting",
    "warn",
]

_LAZY = {
    "SectionModel": "co_core.settings",
    "Settings": "co_core.settings",
    "setting": "co_core.settings",
    "current_settings": "co_core.settings",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'co_core' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
