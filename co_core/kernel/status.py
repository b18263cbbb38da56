"""Health checks for ``co status``: every plugin's, run concurrently, each with its own timeout."""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from co_core.kernel.app import App

State = Literal["ok", "warn", "fail", "off"]
DEFAULT_TIMEOUT = 3.0


@dataclass
class CheckResult:
    """``off`` means "not configured", which is fine; ``warn`` works with a caveat."""

    state: State
    detail: str


def ok(detail: str) -> CheckResult:
    return CheckResult("ok", detail)


def warn(detail: str) -> CheckResult:
    return CheckResult("warn", detail)


def fail(detail: str) -> CheckResult:
    return CheckResult("fail", detail)


def off(detail: str) -> CheckResult:
    return CheckResult("off", detail)


@dataclass
class CheckRow:
    name: str
    plugin: str
    state: State
    detail: str
    seconds: float

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _coerce(value: object) -> CheckResult:
    if isinstance(value, CheckResult):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        return CheckResult(value[0], str(value[1]))
    return ok(str(value) if value is not None else "")


def run_checks(
    checks: list[tuple[str, str, Callable[[], object], float]],
) -> list[CheckRow]:
    """Run (name, plugin, check, timeout) concurrently; a slow or crashing check fails alone."""
    rows: dict[int, CheckRow] = {}

    def run(index: int, name: str, plugin: str, check: Callable[[], object]) -> None:
        start = time.perf_counter()
        try:
            result = _coerce(check())
        except Exception as exc:
            result = fail(f"{type(exc).__name__}: {exc}")
        rows[index] = CheckRow(
            name, plugin, result.state, result.detail, time.perf_counter() - start
        )

    threads = []
    for index, (name, plugin, check, _timeout) in enumerate(checks):
        # Daemon threads: a check stuck on the network must not keep `co` from exiting.
        thread = threading.Thread(target=run, args=(index, name, plugin, check), daemon=True)
        thread.start()
        threads.append(thread)
    started = time.perf_counter()
    for index, thread in enumerate(threads):
        timeout = checks[index][3]
        thread.join(max(0.0, timeout - (time.perf_counter() - started)))
    out = []
    for index, (name, plugin, _check, timeout) in enumerate(checks):
        out.append(
            rows.get(index)
            or CheckRow(name, plugin, "fail", f"timed out after {timeout:g} s", timeout)
        )
    return out


def _bind(check: Callable[..., object], app: App) -> Callable[[], object]:
    """Checks may take ``settings`` and/or ``host``; give them what they name."""
    wanted = inspect.signature(check).parameters
    available: dict[str, Callable[[], object]] = {
        "settings": lambda: app.settings,
        "host": lambda: app.host,
    }
    return lambda: check(**{name: available[name]() for name in wanted if name in available})


def collect_status(app: App) -> list[CheckRow]:
    from co_core.kernel.errors import SettingsError

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
    rows = run_checks(checks) + offered_rows(app)
    for info in app.host.listed():
        if info.status == "failed":
            rows.append(
                CheckRow(f"plugin {info.name}", info.name, "fail", info.error or "failed", 0.0)
            )
    return rows


def offered_rows(app: App) -> list[CheckRow]:
    """One row per plugin with tools: offered to the model, or not and how to set it up."""
    from co_core.kernel.readiness import readiness

    known = readiness(app.host, app.settings)
    by_plugin: dict[str, list[str]] = {}
    blocked: dict[str, dict[str, str]] = {}
    for spec in app.host.tools():
        by_plugin.setdefault(spec.plugin, []).append(spec.name)
        why = known.blocks(spec)
        if why is not None:
            blocked.setdefault(spec.plugin, {})[spec.name] = why
    rows = []
    for plugin, names in sorted(by_plugin.items()):
        held = blocked.get(plugin, {})
        name = f"{plugin} tools"
        if not held:
            count = f"{len(names)} tool" + ("" if len(names) == 1 else "s")
            rows.append(CheckRow(name, plugin, "ok", f"offered ({count})", 0.0))
        elif len(held) == len(names):
            rows.append(
                CheckRow(name, plugin, "off", f"not offered: {next(iter(held.values()))}", 0.0)
            )
        else:
            reasons = "; ".join(
                f"{', '.join(n for n in held if held[n] == why)}: {why}"
                for why in dict.fromkeys(held.values())
            )
            detail = f"{len(names) - len(held)} of {len(names)} offered; not {reasons}"
            rows.append(CheckRow(name, plugin, "warn", detail, 0.0))
    return rows
