"""``co status`` line for the policy: how many rules apply here, and any ignored project file."""

from __future__ import annotations

from typing import Any

from co_core.status import CheckResult, ok, warn


def policy_check(settings: Any) -> CheckResult:
    from co_core.policy.engine import PolicyEngine

    engine = PolicyEngine(settings)
    levels = engine.rules()
    counts = ", ".join(
        f"{len(levels[level])} {name}"
        for level, name in (
            ("user", "user rules"),
            ("project", "project rules"),
            ("grant", "saved approvals"),
        )
    )
    if engine.notices:
        return warn(f"{counts}; {engine.notices[0]}")
    return ok(counts)
