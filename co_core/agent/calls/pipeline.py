"""The call pipeline: the one owner of a tool call's life.

Co's agent (the policy gate, for ``co chat`` and ``co ask``) and ``co mcp serve`` drive
every call through the same steps, each taken once:

- **seen**: the model (or an MCP client) asked for the call; its record opens. A call of
  a tool that does not exist, or was not offered in this step, ends here as ``retry``.
- **resolved**: to what it will really touch (the tool's resolver): the canonical
  arguments the tool will run with, and the permission keys the policy decides on. A
  call that cannot be made as asked ends as ``retry`` with the reason.
- **decided**: the policy engine's decision on exactly that, kept unchanged.
- **asked / answered**: a call that needs approval is asked about (the frontend); the
  answer is remembered (grants). A "no", a policy's deny, or nobody to ask: ``denied``.
- **running**: :meth:`CallPipeline.execute` runs the tool with the canonical arguments.
  Just before an approved call runs, it is *confirmed*: resolved again, it must touch
  exactly what was approved (a file swapped for a symlink in between does not run).
- **ended**: ``ok``, ``retry``, ``error``, ``denied``, ``interrupted`` or ``timed out``,
  read from what the tool raised by the one mapping in :mod:`co_core.agent.calls.outcome`.

Everything said about a call listens to the stage it reaches: the audit trail, the trace
spans (:mod:`co_core.agent.calls.listeners`), the terminal's line (the frontend), the
loop guard and the toolbox. None of them moves a record or works out its arguments again.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from co_core.agent.calls.record import (
    RAN,
    Ending,
    Event,
    Listener,
    Stage,
    StageError,
    ToolCallRecord,
)
from co_core.agent.frontend import NO_TERMINAL, Answer
from co_core.kernel.tools import CallRefused

if TYPE_CHECKING:
    from co_core.agent.frontend import Frontend
    from co_core.kernel.deps import CoDeps
    from co_core.policy.engine import Decision, PolicyEngine

NOT_OFFERED = "{tool} was not offered in this step; it is offered from the next one"
COVERED = "allowed by your answer to an earlier call"


@dataclass
class CallPipeline:
    """A conversation's (or ``co mcp serve``'s) tool calls, each moved through its stages.

    ``offered`` says whether a tool was sent to the model in the current step (the
    toolbox's choice); a call of one that was not ends at once, excused: the model could
    not know. ``records`` are the running turn's.
    """

    engine: PolicyEngine
    frontend: Frontend
    offered: Callable[[str], bool] | None = None
    records: dict[str, ToolCallRecord] = field(default_factory=dict)
    listeners: list[Listener] = field(default_factory=list)

    def __post_init__(self) -> None:
        from co_core.agent.calls.listeners import AuditTrail, trace

        standard: list[Listener] = [trace, self._show]
        if self.engine.audit is not None:
            standard.insert(0, AuditTrail(self.engine.audit))
        self.listeners[:0] = standard

    def listen(self, listener: Listener) -> None:
        """Hear every stage a call reaches (after the audit trail, traces and the frontend)."""
        self.listeners.append(listener)

    def new_turn(self) -> None:
        self.records = {}

    # -- the steps -------------------------------------------------------------------------

    def seen(self, call_id: str, tool: str, args: Mapping[str, Any]) -> ToolCallRecord:
        """The record of a call, opened now if this is the first word of it."""
        record = self.records.get(call_id)
        if record is not None:
            return record
        call = self.engine.make_call(tool, args)
        record = ToolCallRecord(call_id, call, dict(args), written=tuple(args))
        self.records[call_id] = record
        self._emit("seen", record)
        if tool not in self.engine.specs:
            self.end(record, "retry", f"unknown tool {tool!r}")
        elif self.offered is not None and not self.offered(tool):
            self.end(record, "retry", NOT_OFFERED.format(tool=tool), excused=True)
        return record

    def resolve(self, record: ToolCallRecord, args: Mapping[str, Any], deps: CoDeps) -> bool:
        """Resolve the call (its arguments validated) to what it will really touch; False
        when it cannot be made as asked (it ended as ``retry``, the reason in ``result``)."""
        record.asked = dict(args)  # as written, validated (the tool's defaults filled in)
        try:
            record.call = self.engine.make_call(record.tool, args, deps)
        except (CallRefused, OSError) as refused:
            self.end(record, "retry", _refusal(refused))
            return False
        record.resolved = True
        self._move(record, "resolved")
        return True

    def decide(self, record: ToolCallRecord) -> Decision:
        """The policy's decision on the resolved call; in the audit trail before it runs."""
        decision = record.decision = self.engine.decide(record.call)
        self._move(record, "decided")
        return decision

    def deny(self, record: ToolCallRecord, message: str) -> None:
        self.end(record, "denied", message)

    async def settle(self, records: Sequence[ToolCallRecord]) -> None:
        """The held calls of one response: those the policy denies, or that nobody can be
        asked about, end as denied; the others are listed together and asked about one by
        one (a yes "for the session" may answer the ones after it)."""
        asking: list[ToolCallRecord] = []
        for record in records:
            decision = record.decision
            if record.stage != "decided" or decision is None:
                self.deny(record, "Denied: this call cannot be approved.")
            elif decision.effect == "deny":
                self.deny(record, f"Denied by policy: {decision.reason}")
            elif not self.frontend.interactive:
                self.deny(record, f"Denied: {NO_TERMINAL}.")
            else:
                asking.append(record)
        if len(asking) > 1:
            await self.frontend.announce(asking)
        granted: Answer | None = None
        for record in asking:
            if granted is not None and self.engine.decide(record.call).allowed:
                self.answer(record, Answer(True, COVERED, granted.scope, by="grant"))
                continue
            self._move(record, "asked")
            answer = await self.frontend.approve(record)
            self.answer(record, answer)
            if answer.approved and answer.scope != "once":
                granted = answer

    def answer(self, record: ToolCallRecord, answer: Answer) -> None:
        """The user's answer: remembered by the engine (grants); a no ends the call."""
        record.answer = answer
        self._move(record, "answered")
        if answer.by == "user" and record.decision is not None:
            self.engine.record_answer(record.decision, answer.approved, scope=answer.scope)
        if answer.approved:
            return
        text = "The user denied this call"
        self.deny(record, f"{text}: {answer.reason}" if answer.reason else f"{text}.")

    def confirm(self, record: ToolCallRecord, args: Mapping[str, Any], deps: CoDeps) -> bool:
        """Just before an approved call runs: resolved again, does it touch exactly what
        was approved? False: it ended as ``retry``, saying so (the model may call again,
        and is asked again)."""
        approved = record.call
        try:
            again = self.engine.make_call(record.tool, args, deps)
        except (CallRefused, OSError) as refused:
            self.end(record, "retry", _refusal(refused))
            return False
        if (dict(again.args), again.all_keys) != (dict(approved.args), approved.all_keys):
            self.end(
                record,
                "retry",
                "what this call would touch changed after it was approved "
                f"({approved.permission_key} -> {again.permission_key}); "
                "call it again to be asked again",
            )
            return False
        return True

    async def execute(
        self, record: ToolCallRecord, run: Callable[[dict[str, Any]], Awaitable[Any]]
    ) -> Any:
        """Run a call that may run (allowed, or approved and confirmed) with its canonical
        arguments, and end it however it ends. What ``run`` raised is raised again, for
        the driver to pass on (pydantic-ai) or report (``co mcp serve``)."""
        from co_core.agent.calls.outcome import outcome

        allowed = record.decision is not None and record.decision.allowed
        approved = record.answer is not None and record.answer.approved
        if not (record.stage == "decided" and allowed) and not (
            record.stage == "answered" and approved
        ):
            raise StageError(f"tool call {record.call_id} may not run: {record.stage}")
        self._move(record, "running")
        record.run_at = time.perf_counter()
        try:
            result = await run(dict(record.call.args))
        except BaseException as error:
            ended = outcome(error)
            if ended is not None:
                self.end(record, *ended)
            raise
        self.end(record, "ok", result)
        return result

    def end(
        self, record: ToolCallRecord, status: Ending, result: Any = None, *, excused: bool = False
    ) -> None:
        """Close a record, once."""
        if record.ended:
            return
        record.status, record.result, record.excused = status, result, excused
        if status in RAN:
            start = record.run_at if record.run_at is not None else record.seen_at
            record.duration = time.perf_counter() - start
        self._move(record, "ended")

    def interrupt(self) -> None:
        """Ctrl+C or a failed turn: every call still open ends as interrupted."""
        from co_core.agent.calls.outcome import INTERRUPTED

        for record in list(self.records.values()):
            self.end(record, "interrupted", INTERRUPTED)

    # -- moving and telling ----------------------------------------------------------------

    def _move(self, record: ToolCallRecord, stage: Stage) -> None:
        record.move(stage)
        self._emit(stage, record)

    def _emit(self, event: Event, record: ToolCallRecord) -> None:
        for listener in self.listeners:
            listener(event, record)

    def _show(self, event: Event, record: ToolCallRecord) -> None:
        """The frontend draws a call once it is resolved, so its line shows the arguments the
        approval shows and the tool runs with (a model may write ``&#39;`` or ``./x``), and
        again when it ends; a call that ends before it resolves is drawn as written then."""
        if event == "resolved" or event == "ended":
            self.frontend.show(record)


def _refusal(error: CallRefused | OSError) -> str:
    """Why a call cannot be made as asked. A resolver that reads the disk can meet a file
    or folder changing under it (swapped for a symlink, removed): a refusal too, never a
    crash of the turn or of ``co mcp serve``."""
    if isinstance(error, CallRefused):
        return str(error)
    what = error.strerror or type(error).__name__
    return f"what this call names changed while Co was resolving it ({what.lower()}); call again"
