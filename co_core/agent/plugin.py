"""The agent layer's hooks: Co's own model providers (co_core.agent.providers), the
settings of the embedded ``local`` model, of the small-model steering, of instruction
files, memory and the user's hooks; the ``remember`` tool; and ``co status``'s rows for
the model and for what a session in this folder reads (instructions, memory, the user's
commands and hooks)."""

from __future__ import annotations

from co_core.kernel.hookspecs import (
    ModelRegister,
    SettingsRegister,
    StatusCheckRegister,
    ToolRegister,
    hookimpl,
)


@hookimpl
def register_models(register: ModelRegister) -> None:
    from co_core.agent.providers import register as own

    own(register)


@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_core.agent.instructions import InstructionsSettings
    from co_core.agent.local.server import LocalSettings
    from co_core.agent.memory import MemorySettings
    from co_core.agent.small import SteeringSettings
    from co_core.agent.user_hooks import HooksSettings

    register("local", LocalSettings)
    register("steering", SteeringSettings)
    register("instructions", InstructionsSettings)
    register("memory", MemorySettings)
    register("hooks", HooksSettings)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(
        "co_core.agent.remember:remember",
        risk="write",
        permission="memory:write:{scope}",
        resolve="co_core.agent.remember:resolve_remember",
    )


@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    from co_core.agent.status import CHECK_TIMEOUT, model_check
    from co_core.agent.status_files import (
        commands_check,
        hooks_check,
        instructions_check,
        memory_check,
    )

    register("model", model_check, timeout=CHECK_TIMEOUT)
    register("instructions", instructions_check)
    register("memory", memory_check)
    register("commands", commands_check)
    register("hooks", hooks_check)
