"""The ``traces`` line of ``co status``: where traces go (no OpenTelemetry import)."""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from co_core.kernel.status import CheckResult, off, ok, warn


def traces_check(settings: Any) -> CheckResult:
    from co_core.telemetry.settings import otlp_target, telemetry_section

    tele = telemetry_section(settings)
    if not tele.enabled or os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return off("telemetry.enabled is false: no traces are recorded")
    parts = []
    if tele.sqlite:
        path = tele.database()
        if path.exists():
            try:
                conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1.0)
                try:
                    count = conn.execute("SELECT count(*) FROM spans").fetchone()[0]
                finally:
                    conn.close()
            except sqlite3.Error as exc:
                return warn(f"{path}: cannot be read ({exc}); traces will not be saved")
            parts.append(f"{path} ({count:,} spans)")
        else:
            parts.append(f"{path} (not created yet)")
    target = otlp_target(tele)
    if target:
        from co_core.kernel import extras

        missing = extras.missing("otlp")
        if missing:
            return warn(f"traces are not sent to {target}: {missing}")
        parts.append(f"OTLP {target}")
    if not parts:
        return warn("tracing is on but telemetry.sqlite is off and no OTLP endpoint is set")
    content = "with content" if tele.include_content else "content off"
    return ok(" + ".join(parts) + f"; {content}")
