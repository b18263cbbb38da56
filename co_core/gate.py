"""The one place a tool call is allowed, denied, or sent to the user for approval.

Kept deliberately tiny: the policy engine (rules, plugin opinions, remembered answers)
replaces ``decide`` without the agent or the REPL changing. Until then: reading is
allowed, anything that writes, sends or executes is asked about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from co_core.tools import ToolCall

Effect = Literal["allow", "deny", "ask"]


@dataclass(frozen=True)
class Decision:
    effect: Effect
    reason: str
    source: str  # who decided: "default", "yolo", a plugin name, a rule file


def decide(call: ToolCall, deps: Any = None, *, yolo: bool = False) -> Decision:
    """Decide one call. ``yolo`` (the user's explicit ``--yolo``) allows everything."""
    if yolo:
        return Decision("allow", "--yolo: every call allowed", "yolo")
    if call.risk == "read":
        return Decision("allow", "reads are allowed", "default")
    what = call.risk or "undeclared-risk"
    return Decision("ask", f"{what} tool: needs your approval", "default")
