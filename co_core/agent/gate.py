"""The policy gate: every tool call is decided before it runs, and its record closed after.

A pydantic-ai capability. When the model's response arrives, each call gets its record
(:mod:`co_core.agent.calls`); before a call runs the policy engine decides it; calls that
need approval are held (pydantic-ai's deferred tool requests) and asked about together,
one question each; when a call ends, however it ends, its record is closed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import (
    ApprovalRequired,
    CallDeferred,
    ModelRetry,
    SkipToolExecution,
    ToolFailed,
    ToolFailedError,
    ToolRetryError,
)
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied

from co_core.agent.calls import CallLog, ToolCallRecord
from co_core.agent.frontend import NO_TERMINAL, Answer
from co_core.kernel.deps import CoDeps
from co_core.kernel.tools import CallRefused

HELD = (ApprovalRequired, CallDeferred, SkipToolExecution)  # not run (yet): still open


def call_args(call: ToolCallPart) -> dict[str, Any]:
    """A call's arguments as a dict, even when the model wrote broken JSON."""
    try:
        return call.args_as_dict()
    except ValueError:
        return {"arguments": str(call.args)}


def retry_text(error: BaseException) -> str:
    """What the model is told when it must fix its call."""
    if isinstance(error, ToolRetryError):
        return str(error.tool_retry.content)
    if isinstance(error, ModelRetry):
        return error.message
    return str(error)


@dataclass
class PolicyGate(AbstractCapability[CoDeps]):
    calls: CallLog

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def after_model_request(
        self, ctx: RunContext[CoDeps], *, request_context: Any, response: ModelResponse
    ) -> ModelResponse:
        known = self.calls.engine.specs
        for part in response.parts:
            if isinstance(part, ToolCallPart):
                record = self.calls.seen(part.tool_call_id, part.tool_name, call_args(part))
                if part.tool_name not in known:
                    self.calls.finish(record, "retry", f"unknown tool {part.tool_name!r}")
        return response

    async def on_tool_validate_error(
        self, ctx: RunContext[CoDeps], *, call: ToolCallPart, tool_def: Any, args: Any, error: Any
    ) -> Any:
        record = self.calls.seen(call.tool_call_id, call.tool_name, call_args(call))
        self.calls.finish(record, "retry", retry_text(error))
        raise error

    async def before_tool_execute(
        self, ctx: RunContext[CoDeps], *, call: ToolCallPart, tool_def: Any, args: dict[str, Any]
    ) -> dict[str, Any]:
        """Resolve the call to what it will touch, decide on that, and run the tool with
        exactly those (canonical) arguments."""
        record = self.calls.seen(call.tool_call_id, call.tool_name, args)
        try:
            if not ctx.tool_call_approved:
                record.asked = dict(args)
                if not self.calls.decide(record, ctx.deps).allowed:
                    raise ApprovalRequired()
            else:  # approved as it was decided: it must still touch the same thing
                approved = record.call
                again = self.calls.resolve(record, args, ctx.deps)
                if (again.args, again.all_keys) != (approved.args, approved.all_keys):
                    raise ModelRetry(
                        "what this call would touch changed after it was approved "
                        f"({approved.permission_key} -> {again.permission_key}); "
                        "call it again to be asked again"
                    )
        except CallRefused as refused:
            raise ModelRetry(str(refused)) from refused
        self.calls.running(record)
        return dict(record.call.args)

    async def wrap_tool_execute(
        self,
        ctx: RunContext[CoDeps],
        *,
        call: ToolCallPart,
        tool_def: Any,
        args: dict[str, Any],
        handler: Any,
    ) -> Any:
        record = self.calls.seen(call.tool_call_id, call.tool_name, args)
        try:
            result = await handler(args)
        except HELD:
            raise
        except (ModelRetry, ToolRetryError) as error:
            self.calls.finish(record, "retry", retry_text(error))
            raise
        except (ToolFailed, ToolFailedError, Exception) as error:
            self.calls.finish(record, "error", str(error) or type(error).__name__)
            raise
        self.calls.finish(record, "ok", result)
        return result

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[CoDeps], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """One response's held calls: denials answered at once, the rest listed together
        and asked about one by one (a yes "for the session" may cover the ones after it)."""
        results: dict[str, bool | ToolApproved | ToolDenied] = {}
        asking: list[ToolCallRecord] = []
        for part in requests.approvals:
            record = self.calls.seen(part.tool_call_id, part.tool_name, call_args(part))
            decision = record.decision or self.calls.decide(record, ctx.deps)
            if decision.allowed:
                results[record.call_id] = True
            elif decision.effect == "deny":
                results[record.call_id] = self._deny(record, f"Denied by policy: {decision.reason}")
            elif not self.calls.frontend.interactive:
                results[record.call_id] = self._deny(record, f"Denied: {NO_TERMINAL}.")
            else:
                asking.append(record)
        frontend = self.calls.frontend
        if len(asking) > 1:
            await frontend.announce(asking)
        granted = False
        for record in asking:
            if granted and self._covered(record, ctx.deps):
                results[record.call_id] = True
                continue
            answer: Answer = await frontend.approve(record)
            self.calls.answered(record, answer)
            granted = granted or (answer.approved and answer.scope != "once")
            if answer.approved:
                results[record.call_id] = True
            else:
                text = "The user denied this call"
                text = f"{text}: {answer.reason}" if answer.reason else f"{text}."
                results[record.call_id] = self._deny(record, text)
        return DeferredToolResults(approvals=results)

    def _covered(self, record: ToolCallRecord, deps: CoDeps) -> bool:
        """After a yes "for the session": is this call allowed now? (Decided again.)"""
        try:
            return self.calls.decide(record, deps).allowed
        except CallRefused:  # it will be refused, with the reason, when it runs
            return False

    def _deny(self, record: ToolCallRecord, message: str) -> ToolDenied:
        self.calls.finish(record, "denied", message)
        return ToolDenied(message)
