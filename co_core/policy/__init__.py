"""Co's permission policy engine (UI-free): keys, rules, precedence, grants, shell splitting.

The chat loop builds one :class:`PolicyEngine` per session with
``PolicyEngine.from_app(app, session_id=..., approve=..., yolo=..., headless=...)``,
calls ``decide(call)`` before each tool call and ``record_answer(decision, approved,
scope=...)`` after a prompt. docs/policy.md describes the rules users write.
"""

from __future__ import annotations

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
