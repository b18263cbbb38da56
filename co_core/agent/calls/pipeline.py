"""The call pipeline: the one owner of a tool call's life.

Co's agent (the policy gate, for ``co chat`` and ``co ask``) and ``co mcp serve`` drive
every call through the same steps, each taken once:

- **seen**: the model (or an MCP client) asked for the call; its record opens
  (:meth:`CallPipeline.open`; the drivers find it again with :meth:`CallPipeline.find`).
  A call of a tool that does not exist, or was not offered in this step, ends here as
  ``retry``; a model response whose calls reach for a tool that is not set up is answered
  by Co, its calls ending as ``not set up``.
- **resolved**: to what it will really touch (the tool's resolver): the canonical
  arguments the tool will run with, and the permission keys the policy decides on. A
  call that cannot be made as asked ends as ``retry`` with the reason.
- **decided**: the policy engine's decision on exactly that, kept unchanged unless a
  reviewer (the user's ``before_tool`` hooks, co_core.agent.user_hooks) makes it
  stricter; nothing a reviewer says can loosen it.
- **asked / answered**: a call that needs approval is asked about (the frontend); the
  answer is remembered (grants). A "no", a policy's deny, or nobody to ask: ``denied``.
- **running**: :meth:`CallPipeline.execute` runs the tool with the canonical arguments.
  Just before an approved call runs, it is *confirmed*: resolved again, it must touch
  exactly what was approved (a file swapped for a symlink in between does not run).
- **ended**: ``ok``, ``retry``, ``error``, ``denied``, ``interrupted`` or ``timed out``,
  read from what the tool raised by the one mapping in :mod:`co_core.agent.calls.outcome`;
  ``stopped`` when the loop guard ends the turn on it, ``not set up`` (above).

The loop guard (:mod:`co_core.agent.calls.loops`) is asked at each opening and
resolving and answers with a verdict the pipeline acts on. Everything said about a call
listens to the stage it reaches: the audit trail, the trace spans
(:mod:`co_core.agent.calls.listeners`), the terminal's line (the frontend), the loop
guard and the toolbox. None of them moves a record or works out its arguments again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

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
from co_core.kernel.cancel import cancellable
from co_core.kernel.permits import Permit, running_with
from co_core.kernel.tools import CallRefused

if TYPE_CHECKING:
    from co_core.agent.calls.loops import LoopGuard, Verdict
    from co_core.agent.frontend import Frontend
    from co_core.kernel.deps import CoDeps
    from co_core.policy.engine import Decision, PolicyEngine

STOP_WAIT = 1.5  # s a cancelled call's tool gets to end what it started (a sandboxed command)
NOT_OFFERED = "{tool} was not offered in this step; it is offered from the next one"
COVERED = "allowed by your answer to an earlier call"


@dataclass(frozen=True)
class Asked:
    """One call of a model response, as the driver read it."""

    call_id: str
    tool: str
    args: Mapping[str, Any]
    from_text: bool = False  # written as text, recovered as a call


class Reviewer(Protocol):
    """Hears a call as it is decided, and after it ran (the user's hooks)."""

    async def before(self, record: ToolCallRecord, decision: Decision) -> Decision | None:
        """A stricter decision for the call, or None; a looser one is ignored."""
        ...

    async def after(self, record: ToolCallRecord) -> None:
        """The call ran and ended (``record.status``)."""
        ...


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
    guard: LoopGuard | None = None  # judges each call opened or resolved (and each response)
    reviewers: list[Reviewer] = field(default_factory=list)

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
        if self.guard is not None:
            self.guard.new_turn()

    # -- the steps -------------------------------------------------------------------------

    def arrived(self, calls: Sequence[Asked], text: str = "") -> str | None:
        """A model response's calls, before any of them runs: each one's record opened.
        Returns what Co answers in the model's place when a call reaches for a tool that
        is not set up (those calls end as ``not set up``), else None. Raises the loop
        guard's :class:`~co_core.agent.calls.loops.TurnStopped` when it ends the turn
        (the calls end as ``stopped``)."""
        verdict = self.guard.look([c.tool for c in calls], text) if self.guard else None
        if verdict is None:
            for call in calls:
                self.open(call.call_id, call.tool, call.args, from_text=call.from_text)
            return None
        records = [
            self.find(c.call_id) or self._opened(c.call_id, c.tool, c.args, c.from_text)
            for c in calls
        ]
        if verdict.answer is not None:
            for record in records:
                self.end(record, "not set up", verdict.answer)
            return verdict.answer
        self._stop(records, verdict)
        return None

    def open(
        self, call_id: str, tool: str, args: Mapping[str, Any], *, from_text: bool = False
    ) -> ToolCallRecord:
        """Open the record of a call the model (or an MCP client) asks for; a call of an
        unknown tool, or of one not offered in this step, ends at once as ``retry``."""
        earlier = self.records.pop(call_id, None)
        if earlier is not None:  # a server that gives every call the same id ("call_1")
            self.records[f"{call_id}#{len(self.records)}"] = earlier
        record = self._opened(call_id, tool, args, from_text)
        self._judge(record)  # the same call as one that failed: the turn ends here
        if tool not in self.engine.specs:
            self.end(record, "retry", f"unknown tool {tool!r}")
        elif self.offered is not None and not self.offered(tool):
            self.end(record, "retry", NOT_OFFERED.format(tool=tool), excused=True)
        return record

    def find(self, call_id: str) -> ToolCallRecord | None:
        """The record of a call opened in this turn, or None."""
        return self.records.get(call_id)

    def _opened(
        self, call_id: str, tool: str, args: Mapping[str, Any], from_text: bool
    ) -> ToolCallRecord:
        call = self.engine.make_call(tool, args)
        record = ToolCallRecord(call_id, call, dict(args), written=tuple(args))
        record.from_text = from_text
        self.records[call_id] = record
        self._emit("seen", record)
        return record

    def _judge(self, record: ToolCallRecord) -> None:
        verdict = self.guard.judge(record) if self.guard is not None else None
        if verdict is not None and verdict.stop is not None:
            self._stop([record], verdict)

    def _stop(self, records: Sequence[ToolCallRecord], verdict: Verdict) -> None:
        """The loop guard ends the turn: the calls it stopped end as ``stopped``."""
        assert verdict.stop is not None
        for record in records:
            self.end(record, "stopped", str(verdict.stop))
        raise verdict.stop

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
        self._judge(record)
        return True

    async def decide(self, record: ToolCallRecord) -> Decision:
        """The policy's decision on the resolved call, made stricter by a reviewer that
        says so (never looser); in the audit trail before it runs."""
        decision = self.engine.decide(record.call)
        for reviewer in self.reviewers:
            decision = stricter(decision, await reviewer.before(record, decision))
        record.decision = decision
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
            with running_with(_permit(record)):  # the tool sees what let it run
                result = await _stoppable(run, dict(record.call.args))
        except BaseException as error:
            ended = outcome(error)
            if ended is not None:
                self.end(record, *ended)
                if ended[0] != "interrupted":
                    await self._reviewed(record)
            raise
        self.end(record, "ok", result)
        await self._reviewed(record)
        return result

    async def _reviewed(self, record: ToolCallRecord) -> None:
        for reviewer in self.reviewers:
            await reviewer.after(record)

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


async def _stoppable(run: Callable[[dict[str, Any]], Awaitable[Any]], args: dict[str, Any]) -> Any:
    """Run a tool so that cancelling the call stops the tool, not only the wait for it.

    A tool written as a plain function runs in a worker thread that cancellation does not
    reach. So the tool runs in a task of its own, holding the call's cancel event
    (:func:`co_core.kernel.cancel.cancel_event`). When the call is cancelled, the event is
    set, and a tool that listens to it gets ``STOP_WAIT`` seconds to end what it started
    (a sandboxed command is killed) before the cancellation goes on; any other tool is
    cancelled at once (an async one stops there; a thread that does not listen runs on,
    its result dropped).
    """
    with cancellable() as stop:
        running = asyncio.ensure_future(run(args))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        stop.set()
        if stop.listened:
            await asyncio.wait([running], timeout=STOP_WAIT)
        running.add_done_callback(_quietly)
        running.cancel()
        raise


def _quietly(task: asyncio.Future[Any]) -> None:
    """What a stopped tool raised is no news: its call was cancelled."""
    if not task.cancelled():
        task.exception()


def _refusal(error: CallRefused | OSError) -> str:
    """Why a call cannot be made as asked. A resolver that reads the disk can meet a file
    or folder changing under it (swapped for a symlink, removed): a refusal too, never a
    crash of the turn or of ``co mcp serve``."""
    if isinstance(error, CallRefused):
        return str(error)
    what = error.strerror or type(error).__name__
    return f"what this call names changed while Co was resolving it ({what.lower()}); call again"


def _permit(record: ToolCallRecord) -> Permit:
    """What let the call run: the user's answer, or the policy's decision (read-only only
    when the policy allowed it because a read-only preset's table lists it)."""
    if record.answer is not None and record.answer.approved:
        return Permit("answer" if record.answer.by == "user" else record.answer.by)
    decision = record.decision
    if decision is None:
        return Permit("none")
    return Permit(decision.source, decision.rule, decision.read_only)


def stricter(decided: Decision, proposed: Decision | None) -> Decision:
    """``proposed`` when it is more restrictive than ``decided``, else ``decided``."""
    from co_core.policy.rules import restrictiveness

    if proposed is None or restrictiveness(proposed.effect) <= restrictiveness(decided.effect):
        return decided
    return proposed
