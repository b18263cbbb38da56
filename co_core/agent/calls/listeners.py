"""What is written about a call as it moves: its audit lines and its trace attributes.

Both listen to the call pipeline's stages and only read the record:

- the **audit trail** gets a ``decision`` line when a call is decided (before it runs), an
  ``answer`` line when the user answers, an ``execution`` line when a call that ran ends;
- the **traces**: the decision goes on the call's ``execute_tool`` span, and how the call
  ended (``co.call.status``); a held call is settled in a ``co.approval`` span saying how
  (``co.approval.answer``: ``yes once``, ``yes session``, ``yes project`` or ``no``), by
  whom (``co.approval.by``: ``user``, ``grant``, ``policy``, or ``nobody`` to ask) and
  for which call (``gen_ai.tool.call.id``; the reason only with content in traces); the
  approved call's own run carries the decision that let it run (``co.policy.*``) and the
  answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from co_core.agent.calls.record import RAN, Event, ToolCallRecord
from co_core.telemetry import spans

if TYPE_CHECKING:
    from co_core.agent.frontend import Answer
    from co_core.policy.audit import AuditLog


def answer_label(answer: Answer) -> str:
    """``yes once``, ``yes session``, ``yes project`` or ``no``."""
    return f"yes {answer.scope}" if answer.approved else "no"


@dataclass
class AuditTrail:
    """The audit lines of each call (redacted by the audit log)."""

    log: AuditLog

    def __call__(self, event: Event, record: ToolCallRecord) -> None:
        if event == "decided":
            self._decided(record)
        elif event == "answered":
            self._answered(record)
        elif event == "ended" and record.status in RAN:
            duration = record.duration or 0.0
            self._write(
                "execution",
                record,
                permission=record.call.permission_key,
                status=record.status,
                duration_ms=round(duration * 1000, 1),
                error=None if record.status == "ok" else str(record.result),
            )

    def _decided(self, record: ToolCallRecord) -> None:
        decision = record.decision
        assert decision is not None
        written = {}
        if dict(record.asked) != dict(record.call.args):
            written["as_written"] = dict(record.asked)  # what the model wrote, resolved
        self._write(
            "decision", record, **decision.as_dict(), arguments=dict(record.call.args), **written
        )

    def _answered(self, record: ToolCallRecord) -> None:
        decision, answer = record.decision, record.answer
        assert decision is not None and answer is not None
        keys = decision.pending or (decision.key,)
        self._write(
            "answer",
            record,
            permission=decision.key,
            effect="allow" if answer.approved else "deny",
            source=answer.by,
            scope=answer.scope,
            approved=list(keys) if answer.approved else [],
            reason=answer.reason or None,
        )

    def _write(self, event: str, record: ToolCallRecord, **fields: Any) -> None:
        self.log.write(
            event,
            {"call_id": record.call_id, "plugin": record.call.plugin, "tool": record.tool} | fields,
        )


def trace(event: Event, record: ToolCallRecord) -> None:
    """Put what the pipeline knows about a call on its spans (nothing when tracing is off)."""
    if not spans.tracing():
        return
    if event == "decided":
        decision = record.decision
        assert decision is not None
        traced = spans.tool_span(record.call_id)  # the call's own span, when it is open
        if traced is not None:
            row = decision.rule if decision.rule and decision.rule.startswith("preset ") else None
            traced.set(
                plugin=record.call.plugin,
                **{"co.policy.effect": decision.effect, "co.policy.source": decision.source},
                **{"co.policy.read_only": decision.read_only},
                **({"co.policy.row": row} if row else {}),  # a preset's row: not content
            )
            traced.set_content(**{"co.policy.permission": decision.key})
    elif event == "answered":
        answer = record.answer
        assert answer is not None
        _approval(record, answer_label(answer), answer.by, answer.reason, answer.scope)
    elif event == "running" and record.answer is not None:
        traced = spans.tool_span(record.call_id)  # the approved call's run
        if traced is not None:
            traced.set(
                plugin=record.call.plugin,
                **{
                    "co.policy.effect": "allow",
                    "co.policy.source": "user",
                    "co.approval.answer": answer_label(record.answer),
                },
            )
            traced.set_content(**{"co.policy.permission": record.call.permission_key})
    elif event == "ended":
        traced = spans.tool_span(record.call_id)
        if traced is not None:  # a call that ran: how it ended
            traced.set(**{"co.call.status": record.status})
        elif record.status == "denied" and record.answer is None and record.decision is not None:
            # held, and denied without a question: by the policy, or with nobody to ask
            decision = record.decision
            by = (
                "policy"
                if decision.effect == "deny" and decision.source != "headless"
                else "nobody"
            )
            _approval(record, "no", by, str(record.result), None)


def _approval(
    record: ToolCallRecord, answer: str, by: str, reason: str | None, scope: str | None
) -> None:
    """The ``co.approval`` span of a held call: how it was settled, and by whom."""
    with spans.span(
        "co.approval",
        tool=record.tool,
        scope=scope,
        approved=answer != "no",
        content={"permission": record.call.permission_key, "co.approval.reason": reason or None},
        **{
            "co.approval.answer": answer,
            "co.approval.by": by,
            "gen_ai.tool.call.id": record.call_id,
        },
    ):
        pass
