"""Co's capabilities, given to pydantic-ai as one.

Each of Co's capabilities does one job and is a plain pydantic-ai capability (the policy
gate, text-call recovery, the request deadline, context fitting, tracing). pydantic-ai
copies the run context for every capability on every hook it dispatches, whether the
capability implements that hook or not, several times per tool call; a group pays that
once and calls each part only for the hooks it implements, in pydantic-ai's own order:
"before" and "prepare" hooks first to last, "after" and error hooks last to first, "wrap"
hooks nested with the first part outermost. A part with state of its own for each run
(pydantic-ai's instrumentation) gets its ``for_run`` copy, in a copy of the group.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import RetryModelRequest
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults

HOOKS = (
    "for_run",
    "wrap_run",
    "before_model_request",
    "prepare_model_request",
    "wrap_model_request",
    "after_model_request",
    "on_model_request_error",
    "on_tool_validate_error",
    "before_tool_execute",
    "wrap_tool_execute",
    "handle_deferred_tool_calls",
    "wrap_output_process",
)
# not a hook: where a capability wants to be placed (the group is placed as one; its parts
# run in the order given). Class methods (how one is named, built, combined) are not either.
NOT_HOOKS = ("get_ordering",)


def implements(part: AbstractCapability[Any], hook: str) -> bool:
    return hook in _hooks_of(type(part))


@functools.cache
def _hooks_of(kind: type[AbstractCapability[Any]]) -> frozenset[str]:
    """The hooks a capability class implements, worked out once per class (a group is
    copied for every traced run); TypeError for a hook this group would silently lose."""
    other = [
        name
        for name, value in vars(AbstractCapability).items()
        if name not in HOOKS
        and name not in NOT_HOOKS
        and inspect.isfunction(value)
        and not name.startswith("_")
        and getattr(kind, name) is not value
    ]
    if other:
        raise TypeError(f"{kind.__name__} implements {other}: add them to HOOKS")
    return frozenset(h for h in HOOKS if getattr(kind, h) is not getattr(AbstractCapability, h))


@dataclass
class CapabilityGroup(AbstractCapability[Any]):
    parts: Sequence[AbstractCapability[Any]]
    _by_hook: dict[str, list[AbstractCapability[Any]]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        hooks = [_hooks_of(type(part)) for part in self.parts]
        self._by_hook = {
            h: [p for p, has in zip(self.parts, hooks, strict=True) if h in has] for h in HOOKS
        }

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def for_run(self, ctx: RunContext[Any]) -> CapabilityGroup:
        parts = [
            await part.for_run(ctx) if part in self._by_hook["for_run"] else part
            for part in self.parts
        ]
        if all(new is old for new, old in zip(parts, self.parts, strict=True)):
            return self
        return replace(self, parts=parts)

    async def wrap_run(self, ctx: RunContext[Any], *, handler: Any) -> Any:
        chain = handler
        for part in reversed(self._by_hook["wrap_run"]):
            chain = _bind(part.wrap_run, ctx, chain)
        return await chain()

    async def before_model_request(self, ctx: RunContext[Any], request_context: Any) -> Any:
        for part in self._by_hook["before_model_request"]:
            request_context = await part.before_model_request(ctx, request_context)
        return request_context

    async def prepare_model_request(self, ctx: RunContext[Any], request_context: Any) -> Any:
        for part in self._by_hook["prepare_model_request"]:
            request_context = await part.prepare_model_request(ctx, request_context)
        return request_context

    def _handles_model_request_error(self, ctx: RunContext[Any], request_context: Any) -> bool:
        return any(
            part._handles_model_request_error(ctx, request_context)
            for part in self._by_hook["on_model_request_error"]
        )

    async def on_model_request_error(
        self, ctx: RunContext[Any], *, request_context: Any, error: Exception
    ) -> ModelResponse:
        for part in reversed(self._by_hook["on_model_request_error"]):
            try:
                return await part.on_model_request_error(
                    ctx, request_context=request_context, error=error
                )
            except RetryModelRequest:
                raise
            except Exception as raised:  # passed on: the next part sees it
                error = raised
        raise error

    async def wrap_model_request(
        self, ctx: RunContext[Any], *, request_context: Any, handler: Any
    ) -> Any:
        chain = handler
        for part in reversed(self._by_hook["wrap_model_request"]):
            chain = _bind_request(part, ctx, chain)
        return await chain(request_context)

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: Any, response: ModelResponse
    ) -> ModelResponse:
        for part in reversed(self._by_hook["after_model_request"]):
            response = await part.after_model_request(
                ctx, request_context=request_context, response=response
            )
        return response

    async def on_tool_validate_error(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: Any, args: Any, error: Any
    ) -> Any:
        for part in self._by_hook["on_tool_validate_error"]:
            try:
                return await part.on_tool_validate_error(
                    ctx, call=call, tool_def=tool_def, args=args, error=error
                )
            except Exception as raised:  # passed on: the next part sees it
                error = raised
        raise error

    async def before_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: Any, args: dict[str, Any]
    ) -> dict[str, Any]:
        for part in self._by_hook["before_tool_execute"]:
            args = await part.before_tool_execute(ctx, call=call, tool_def=tool_def, args=args)
        return args

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: Any,
        args: dict[str, Any],
        handler: Any,
    ) -> Any:
        chain = handler
        for part in reversed(self._by_hook["wrap_tool_execute"]):
            chain = _bind_tool(part, ctx, call, tool_def, chain)
        return await chain(args)

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        for part in self._by_hook["handle_deferred_tool_calls"]:
            results = await part.handle_deferred_tool_calls(ctx, requests=requests)
            if results is not None:
                return results
        return None

    async def wrap_output_process(
        self, ctx: RunContext[Any], *, output_context: Any, output: Any, handler: Any
    ) -> Any:
        chain = handler
        for part in reversed(self._by_hook["wrap_output_process"]):
            chain = _bind_output(part, ctx, output_context, chain)
        return await chain(output)


def _bind_output(part: Any, ctx: Any, output_context: Any, inner: Any) -> Any:
    async def process(output: Any) -> Any:
        return await part.wrap_output_process(
            ctx, output_context=output_context, output=output, handler=inner
        )

    return process


def _bind(wrap: Any, ctx: Any, inner: Callable[[], Awaitable[Any]]) -> Any:
    async def call() -> Any:
        return await wrap(ctx, handler=inner)

    return call


def _bind_request(part: Any, ctx: Any, inner: Any) -> Any:
    async def call(request_context: Any) -> Any:
        return await part.wrap_model_request(ctx, request_context=request_context, handler=inner)

    return call


def _bind_tool(part: Any, ctx: Any, call: Any, tool_def: Any, inner: Any) -> Any:
    async def run(args: dict[str, Any]) -> Any:
        return await part.wrap_tool_execute(
            ctx, call=call, tool_def=tool_def, args=args, handler=inner
        )

    return run
