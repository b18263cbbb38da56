"""The agent layer's hooks: Co's own model providers (co_core.agent.providers), the
settings of the embedded ``local`` model and of the small-model steering, and ``co
status``'s model row (which model Co would talk to, and whether it answers)."""

from __future__ import annotations

from co_core.kernel.hookspecs import (
    ModelRegister,
    SettingsRegister,
    StatusCheckRegister,
    hookimpl,
)


@hookimpl
def register_models(register: ModelRegister) -> None:
    from co_core.agent.providers import register as own

    own(register)


@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_core.agent.local.server import LocalSettings
    from co_core.agent.small import SteeringSettings

    register("local", LocalSettings)
    register("steering", SteeringSettings)


@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    from co_core.agent.status import CHECK_TIMEOUT, model_check

    register("model", model_check, timeout=CHECK_TIMEOUT)
