"""The sessions layer's hook: its settings section."""

from __future__ import annotations

from co_core.kernel.hookspecs import SettingsRegister, hookimpl


@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_core.sessions.settings import SessionSettings

    register("sessions", SessionSettings)
