"""One record per tool call, from the moment the model asks for it until it ends.

A :class:`ToolCallRecord` is opened when a call is seen (in the model's response, or when
``co mcp serve`` receives it) and closed once: ``ok``, ``retry`` (the model must fix its
call), ``error``, ``denied`` or ``interrupted``. It holds the policy engine's decision
unchanged and the user's answer. Everything said about the call is written from it, by
:class:`CallLog`: the audit lines, the ``co ask --json`` record, the trace span's policy
attributes and the line the terminal shows.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from co_core.telemetry import spans

if TYPE_CHECKING:
    from co_core.agent.frontend import Answer, Frontend
    from co_core.kernel.deps import CoDeps
    from co_core.kernel.tools import ToolCall
    from co_core.policy.engine import Decision, PolicyEngine

Status = Literal["pending", "ok", "retry", "error", "denied", "interrupted"]
RAN = ("ok", "retry", "error")  # statuses of a call that was executed (or tried to be)


@dataclass
class ToolCallRecord:
    """What happened to one tool call."""

    call_id: str
    call: ToolCall  # what the policy sees: tool, plugin, arguments, permission key, risk
    asked: Mapping[str, Any] | None = None  # the arguments as the model wrote them
    decision: Decision | None = None  # the policy engine's, as it decided
    answer: Answer | None = None  # the user's, when asked
    status: Status = "pending"
    result: Any = None  # the tool's return value, or the message the model got instead
    seen_at: float = field(default_factory=time.perf_counter)
    run_at: float | None = None
    duration: float | None = None

    @property
    def tool(self) -> str:
        return self.call.tool

    @property
    def ended(self) -> bool:
        return self.status != "pending"

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


@dataclass
class CallLog:
    """A conversation's tool calls: opens, decides, answers and closes their records.

    The audit lines go through the engine's audit log (redacted); the terminal hears of
    each call twice through ``frontend.show``: when it is seen and when it ends.
    """

    engine: PolicyEngine
    frontend: Frontend
    records: dict[str, ToolCallRecord] = field(default_factory=dict)  # the running turn's

    def new_turn(self) -> None:
        self.records = {}

    def seen(self, call_id: str, tool: str, args: Mapping[str, Any]) -> ToolCallRecord:
        """The record of a call, opened now if this is the first word of it."""
        record = self.records.get(call_id)
        if record is None:
            record = ToolCallRecord(call_id, self.engine.make_call(tool, args))
            self.records[call_id] = record
            self.frontend.show(record)
        return record

    def resolve(self, record: ToolCallRecord, args: Mapping[str, Any], deps: CoDeps) -> ToolCall:
        """Resolve the call to what it will really touch: the canonical arguments the tool
        then runs with, and the keys the policy decides on. Raises CallRefused."""
        if record.asked is None:
            record.asked = dict(args)
        record.call = self.engine.make_call(record.tool, args, deps)
        return record.call

    def decide(self, record: ToolCallRecord, deps: CoDeps) -> Decision:
        """Resolve and decide; the decision is in the audit file before the call runs."""
        self.resolve(record, record.asked if record.asked is not None else record.call.args, deps)
        decision = record.decision = self.engine.decide(record.call)
        written = {}
        if record.asked is not None and dict(record.asked) != dict(record.call.args):
            written["as_written"] = dict(record.asked)  # what the model wrote, resolved above
        self._audit(
            "decision",
            record,
            **decision.as_dict(),
            arguments=dict(record.call.args),
            **written,
        )
        traced = spans.tool_span(record.call_id)
        if traced is not None:  # the call's own span, when tracing is on
            traced.set(
                plugin=record.call.plugin,
                **{"co.policy.effect": decision.effect, "co.policy.source": decision.source},
            )
            traced.set_content(**{"co.policy.permission": decision.key})
        return decision

    def answered(self, record: ToolCallRecord, answer: Answer) -> None:
        """The user's answer to the approval prompt: remembered (grants) and audited."""
        record.answer = answer
        decision = record.decision
        if decision is None:
            return
        self.engine.record_answer(decision, answer.approved, scope=answer.scope)
        keys = decision.pending or (decision.key,)
        with spans.span(
            "co.approval",
            tool=record.tool,
            scope=answer.scope,
            approved=answer.approved,
            content={"permission": decision.key},
        ):
            pass
        self._audit(
            "answer",
            record,
            permission=decision.key,
            effect="allow" if answer.approved else "deny",
            source="user",
            scope=answer.scope,
            approved=list(keys) if answer.approved else [],
            reason=answer.reason or None,
        )

    def running(self, record: ToolCallRecord) -> None:
        record.run_at = time.perf_counter()

    def finish(self, record: ToolCallRecord, status: Status, result: Any = None) -> None:
        """Close a record once; a call that ran (or failed to) gets its execution line."""
        if record.ended:
            return
        record.status, record.result = status, result
        if status in RAN:
            start = record.run_at if record.run_at is not None else record.seen_at
            record.duration = time.perf_counter() - start
            self._audit(
                "execution",
                record,
                permission=record.call.permission_key,
                status=status,
                duration_ms=round(record.duration * 1000, 1),
                error=None if status == "ok" else str(result),
            )
        self.frontend.show(record)

    def interrupt(self) -> None:
        """Ctrl+C or a failed turn: every call still open ends as interrupted."""
        for record in self.records.values():
            self.finish(record, "interrupted", "Interrupted by user.")

    def _audit(self, event: str, record: ToolCallRecord, **fields: Any) -> None:
        if self.engine.audit is not None:
            self.engine.audit.write(
                event,
                {"call_id": record.call_id, "plugin": record.call.plugin, "tool": record.tool}
                | fields,
            )
