"""``co status`` line for the policy: how many rules apply here, and any ignored project file."""

from __future__ import annotations

from typing import Any

from co_core.kernel.status import CheckResult, ok, warn


def policy_check(settings: Any) -> CheckResult:
    from co_core.policy.engine import PolicyEngine

    engine = PolicyEngine(settings)
    levels: dict[str, list[Any]] = {str(k): v for k, v in engine.rules().items()}
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


def _catch_all(pattern: str) -> bool:
    """A pattern allowing every key, or every key of a family (``**``, ``shell:exec:*``)."""
    wild = set("*:? ")
    if set(pattern) <= wild:
        return True
    _family, _, rest = pattern.partition(":")
    action, _, target = rest.partition(":")
    return action != "read" and bool(target) and set(target) <= wild


def always_allow_check(settings: Any) -> CheckResult:
    """Say loudly whether any configuration lets calls run without asking, wholesale."""
    from co_core.policy.engine import PolicyEngine

    levels = PolicyEngine(settings).rules()
    found = [
        f"{rule.match!r} ({rule.origin})"
        for level in ("user", "project", "grant")
        for rule in levels[level]
        if rule.effect == "allow" and _catch_all(rule.match)
    ]
    if found:
        return warn("ALWAYS ALLOW: " + ", ".join(found) + " run without asking")
    return ok("no always-allow rule; --yolo and --approve apply only to the run given them")
