"""The policy gate: pydantic-ai drives each tool call of a run through the call pipeline.

One capability, one hook per moment of pydantic-ai's that concerns a call:

- a model response arrives (``after_model_request``): calls written as text are
  recovered, then the pipeline opens every call's record (the loop guard may answer for
  the model, or end the turn);
- arguments that do not validate (``on_tool_validate_error``): the call ends, ``retry``;
- a call is about to run (``wrap_tool_execute``): *resolved* and *decided*, then run by
  :meth:`~co_core.agent.calls.pipeline.CallPipeline.execute`; a call the policy does not
  allow is held (pydantic-ai's deferred tool requests) instead, and when it comes back
  approved it is *confirmed* and run;
- the held calls of a response (``handle_deferred_tool_calls``): denied, or asked about.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ApprovalRequired, ModelRetry
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied

from co_core.agent.calls.outcome import outcome
from co_core.agent.calls.pipeline import Asked, CallPipeline
from co_core.agent.calls.record import ToolCallRecord
from co_core.kernel.deps import CoDeps


def call_args(call: ToolCallPart) -> dict[str, Any]:
    """A call's arguments as a dict, even when the model wrote broken JSON."""
    try:
        return call.args_as_dict()
    except ValueError:
        return {"arguments": str(call.args)}


@dataclass
class PolicyGate(AbstractCapability[CoDeps]):
    pipeline: CallPipeline
    text_calls: Collection[str] | None = None  # tool names, to recover calls written as text

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def wrap_run(self, ctx: RunContext[CoDeps], *, handler: Any) -> Any:
        if self.pipeline.guard is not None:
            self.pipeline.guard.new_turn()
        return await handler()

    async def after_model_request(
        self, ctx: RunContext[CoDeps], *, request_context: Any, response: ModelResponse
    ) -> ModelResponse:
        written = response
        if self.text_calls is not None:
            from co_core.agent.local.textcalls import recover

            response = recover(response, self.text_calls)
        from_text = response is not written
        calls = [
            Asked(part.tool_call_id, part.tool_name, call_args(part), from_text)
            for part in response.parts
            if isinstance(part, ToolCallPart)
        ]
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        answer = self.pipeline.arrived(calls, text)
        if answer is not None:  # Co answers in the model's place: nothing is called
            return dataclasses.replace(response, parts=[TextPart(answer)])
        return response

    def _record(self, call: ToolCallPart, args: Any = None) -> ToolCallRecord:
        """The record the response opened (or, for a call it did not show, one now)."""
        found = self.pipeline.find(call.tool_call_id)
        if found is not None:
            return found
        return self.pipeline.open(call.tool_call_id, call.tool_name, args or call_args(call))

    async def on_tool_validate_error(
        self, ctx: RunContext[CoDeps], *, call: ToolCallPart, tool_def: Any, args: Any, error: Any
    ) -> Any:
        record = self._record(call)
        ended = outcome(error)
        if ended is not None:
            self.pipeline.end(record, *ended)
        raise error

    async def wrap_tool_execute(
        self,
        ctx: RunContext[CoDeps],
        *,
        call: ToolCallPart,
        tool_def: Any,
        args: dict[str, Any],
        handler: Any,
    ) -> Any:
        """Resolve and decide the call, then run the tool with exactly those (canonical)
        arguments; or hold it for approval, and confirm it when it comes back approved."""
        pipeline = self.pipeline
        record = self._record(call, args)
        if record.ended:  # refused, or not to be run in this step: the model is told why
            raise ModelRetry(str(record.result))
        if record.stage == "answered":  # approved: it must still touch the same thing
            if not pipeline.confirm(record, args, ctx.deps):
                raise ModelRetry(str(record.result))
        elif record.stage == "seen":
            if not pipeline.resolve(record, args, ctx.deps):
                raise ModelRetry(str(record.result))
            if not (await pipeline.decide(record)).allowed:
                raise ApprovalRequired()
        return await pipeline.execute(record, handler)

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[CoDeps], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """One response's held calls, settled together: approved, or denied with why."""
        records = [self._record(part) for part in requests.approvals]
        await self.pipeline.settle(records)
        results: dict[str, bool | ToolApproved | ToolDenied] = {}
        for record in records:
            approved = record.stage == "answered" and record.answer is not None
            results[record.call_id] = True if approved else ToolDenied(str(record.result))
        return DeferredToolResults(approvals=results)
