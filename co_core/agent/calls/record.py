"""One record per tool call: where it is in its life, and how it ended.

A call moves through named stages, each reached once and only in this order::

    seen -> resolved -> decided -> running -> ended
                           \\-> asked -> answered -> running -> ended

and may end from any stage before ``ended`` (refused, denied, interrupted). The
:class:`~co_core.agent.calls.pipeline.CallPipeline` is the only code that moves a record
(:meth:`ToolCallRecord.move` refuses any other step); everything else reads it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from co_core.agent.frontend import Answer
    from co_core.kernel.tools import ToolCall
    from co_core.policy.engine import Decision

Stage = Literal["seen", "resolved", "decided", "asked", "answered", "running", "ended"]
Status = Literal["pending", "ok", "retry", "error", "denied", "interrupted", "timed out"]
Ending = Literal["ok", "retry", "error", "denied", "interrupted", "timed out"]
RAN: tuple[Ending, ...] = ("ok", "retry", "error", "timed out")  # the tool ran (or tried to)
FAILED: tuple[Ending, ...] = ("retry", "error", "denied", "timed out")

NEXT: dict[Stage, tuple[Stage, ...]] = {
    "seen": ("resolved", "ended"),
    "resolved": ("decided", "ended"),
    "decided": ("asked", "answered", "running", "ended"),  # answered: by an earlier grant
    "asked": ("answered", "ended"),
    "answered": ("running", "ended"),
    "running": ("ended",),
    "ended": (),
}

# What listeners hear: the stage a record just reached.
Event = Stage
Listener = Callable[[Event, "ToolCallRecord"], None]


class StageError(RuntimeError):
    """A record was moved out of order: a bug in Co, never the user's doing."""


@dataclass
class ToolCallRecord:
    """What happened to one tool call."""

    call_id: str
    call: ToolCall  # as the policy sees it: tool, plugin, arguments, permission key, risk
    asked: Mapping[str, Any] = field(default_factory=dict)  # as the model wrote them
    stage: Stage = "seen"
    decision: Decision | None = None  # the policy engine's, as it decided
    answer: Answer | None = None  # the user's, when asked
    status: Status = "pending"
    result: Any = None  # the tool's return value, or the message the model got instead
    resolved: bool = False  # ``call`` holds the canonical arguments the tool runs with
    excused: bool = False  # failed through no fault of the model (a tool it was not offered)
    written: tuple[str, ...] = ()  # the names of the arguments the model wrote
    seen_at: float = field(default_factory=time.perf_counter)
    run_at: float | None = None
    duration: float | None = None

    @property
    def tool(self) -> str:
        return self.call.tool

    @property
    def ended(self) -> bool:
        return self.stage == "ended"

    def move(self, to: Stage) -> None:
        if to not in NEXT[self.stage]:
            raise StageError(f"tool call {self.call_id}: cannot go from {self.stage} to {to}")
        self.stage = to

    @property
    def verdict(self) -> str:
        """``allow``/``deny`` by policy, ``approved``/``denied`` by the user."""
        if self.answer is not None:
            return "approved" if self.answer.approved else "denied"
        if self.decision is None:
            return "allow"
        return "allow" if self.decision.allowed else "deny"

    @property
    def reason(self) -> str:
        if self.answer is not None:
            return self.answer.reason
        return self.decision.reason if self.decision is not None else ""

    def as_dict(self) -> dict[str, Any]:
        """The call as ``co ask --json`` reports it."""
        return {
            "tool": self.call.tool,
            "args": dict(self.call.args),
            "permission": self.call.permission_key,
            "decision": self.verdict,
            "reason": self.reason,
            "status": self.status,
        }
