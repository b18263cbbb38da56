"""Assemble ``co status``: the core's and every plugin's checks, plus plugin load failures."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from co_core.app import App
from co_core.errors import SettingsError
from co_core.status import DEFAULT_TIMEOUT, CheckRow, run_checks


def _bind(check: Callable[..., Any], app: App) -> Callable[[], Any]:
    """Checks may take ``settings`` and/or ``host``; give them what they name."""
    wanted = inspect.signature(check).parameters
    available = {"settings": lambda: app.settings, "host": lambda: app.host}
    return lambda: check(**{name: available[name]() for name in wanted if name in available})


def collect_status(app: App) -> list[CheckRow]:
    try:
        _ = app.settings  # validate now: a bad file is the one row worth showing
    except SettingsError as exc:
        return [CheckRow("settings", "core", "fail", str(exc), 0.0)]
    checks = [
        (
            name,
            entry.plugin,
            _bind(entry.value, app),
            float(entry.options.get("timeout", DEFAULT_TIMEOUT)),
        )
        for name, entry in app.host.named("register_status_checks", "status check").items()
    ]
    rows = run_checks(checks)
    for info in app.host.listed():
        if info.status == "failed":
            rows.append(
                CheckRow(f"plugin {info.name}", info.name, "fail", info.error or "failed", 0.0)
            )
    return rows
