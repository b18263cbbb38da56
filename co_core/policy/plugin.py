"""The policy layer's hooks: its settings section and its ``co status`` rows."""

from __future__ import annotations

from co_core.kernel.hookspecs import SettingsRegister, StatusCheckRegister, hookimpl


@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_core.policy.settings import PolicySettings

    register("policy", PolicySettings)


@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    from co_core.policy.status import always_allow_check, policy_check

    register("policy", policy_check)
    register("always allow", always_allow_check)
