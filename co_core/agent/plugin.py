"""The agent layer's hook: the settings of the embedded ``local`` model."""

from __future__ import annotations

from co_core.kernel.hookspecs import SettingsRegister, hookimpl


@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_core.agent.local_model import LocalSettings

    register("local", LocalSettings)
