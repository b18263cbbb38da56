"""The policy layer's hooks: its settings section, its ``co status`` rows, and the user's
rules for deps made outside a conversation (a plugin's own agent, ``co policy``)."""

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
    from co_core.policy.settings import PolicySettings

    register("policy", PolicySettings)


@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    from co_core.policy.status import always_allow_check, policy_check

    register("policy", policy_check)
    register("always allow", always_allow_check)


def _rules(settings: Any, host: Any, deps: Any) -> Any:
    """The user's rules for these deps' workspace (no flags, no grants of a chat)."""
    from co_core.policy.engine import PolicyEngine

    tools = host.tools() if host is not None else ()
    return PolicyEngine(settings, tools, host, deps.workspace, deps.session_id)


@hookimpl
def register_deps(register: ResourceRegister) -> None:
    from co_core.kernel.deps import POLICY

    register(POLICY, _rules)
