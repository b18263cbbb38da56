"""The telemetry layer's hooks: its settings section and the ``traces`` row of ``co status``."""

from __future__ import annotations

from co_core.kernel.hookspecs import SettingsRegister, StatusCheckRegister, hookimpl


@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_core.telemetry.settings import TelemetrySettings

    register("telemetry", TelemetrySettings)


@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    from co_core.telemetry.status import traces_check

    register("traces", traces_check)
