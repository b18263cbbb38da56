"""Co's permission policy engine (UI-free): keys, rules, precedence, grants, shell splitting.

The chat loop builds one :class:`PolicyEngine` per session with
``PolicyEngine.from_app(app, session_id=..., approve=..., yolo=..., headless=...)``,
calls ``decide(call)`` before each tool call and ``record_answer(decision, approved,
scope=...)`` after a prompt. docs/policy.md describes the rules users write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from co_core.policy.engine import Decision, KeyDecision, PolicyEngine
    from co_core.policy.rules import EFFECTS, LEVELS, Effect, Level, Rule

__all__ = [
    "EFFECTS",
    "LEVELS",
    "Decision",
    "Effect",
    "KeyDecision",
    "Level",
    "PolicyEngine",
    "Rule",
]


def __getattr__(name: str) -> Any:
    # Lazy: `co --help` imports co_core.cli.policy, which must not pull in the engine.
    if name in ("Decision", "KeyDecision", "PolicyEngine"):
        from co_core.policy import engine

        return getattr(engine, name)
    if name in ("EFFECTS", "LEVELS", "Effect", "Level", "Rule"):
        from co_core.policy import rules

        return getattr(rules, name)
    raise AttributeError(f"module 'co_core.policy' has no attribute {name!r}")
