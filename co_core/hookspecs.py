"""The hooks a Co plugin can implement.

Every hook takes keyword arguments; an implementation may accept fewer than the spec
offers (pluggy passes only the ones it names), which is how plugins written against an
older version of this file keep loading. Hooks that register things receive a
``register`` callback, so a plugin can import its heavy modules inside the hook body
and Co's start-up stays fast.

``HOOKSPEC_VERSION`` increases whenever a hook gains a parameter or a hook is added;
docs/plugins.md lists what changed in each version. A plugin's hook module may declare
``CO_HOOKSPEC_VERSION = N``: on a Co with an older version it is skipped with one clear
line (co_core.plugins.check_version) instead of failing later.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from co_core.settings import Settings
    from co_core.tools import ToolCall

PROJECT = "co"
HOOKSPEC_VERSION = 2  # 2: prompt_markers

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_tools(register: Any) -> None:
    """Give Co tools: ``register(fn_or_"module:attr", risk=..., permission=...)``."""


@hookspec
def register_deps(register: Any) -> None:
    """Give Co named resources built on first use: ``register(name, factory)``."""


@hookspec
def register_settings(register: Any) -> None:
    """Give Co a settings section: ``register(section_name, PydanticModel)``."""


@hookspec
def register_status_checks(register: Any) -> None:
    """Give ``co status`` health checks: ``register(name, check)``."""


@hookspec
def register_commands(app: Any) -> None:
    """Add CLI commands to the ``co`` Typer app."""


@hookspec
def register_slash_commands(register: Any) -> None:
    """Add REPL slash commands: ``register(name, handler, help)``."""


@hookspec
def approval_policy(call: ToolCall, settings: Settings) -> str | None:
    """Give an opinion on one tool call: "allow", "deny", "ask" or None (no opinion)."""


@hookspec
def system_instructions(settings: Settings) -> str | None:
    """Return text appended to the agent's system prompt, or None."""


@hookspec
def prompt_markers(settings: Settings) -> str | None:
    """Return a short warning shown in ``co chat``'s prompt line (e.g. "no-sandbox"), or None."""
