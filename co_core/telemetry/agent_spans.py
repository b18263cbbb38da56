"""Spans for an agent's runs, model requests and tool calls: one pydantic-ai capability.

Co traces its agent with :class:`TracingCapability` rather than pydantic-ai's own
instrumentation, which prepares the whole conversation as span attributes on every
request even when content is off; here content is serialised only when the user opted in.
A plugin's own agent gets the same spans from ``co_core.telemetry.capabilities()``.

The spans follow OpenTelemetry's GenAI conventions as pydantic-ai writes them, so the
trace database, ``co traces``, Datasette's queries and any OTLP backend read them alike:
``invoke_agent co`` per run, ``chat <model>`` per request, ``execute_tool <tool>`` per call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from opentelemetry.context import attach, detach
from opentelemetry.trace import set_span_in_context
from pydantic import ValidationError
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import (
    ApprovalRequired,
    CallDeferred,
    ModelRetry,
    SkipToolExecution,
    ToolRetryError,
)
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_core import to_json

from co_core.telemetry.spans import mark_failed

_CONTROL_FLOW = (ApprovalRequired, CallDeferred, SkipToolExecution)  # not failures
_OPTIONS = {"record_exception": False, "set_status_on_exception": False}


def _json(value: Any) -> str:
    return value if isinstance(value, str) else to_json(value, fallback=str).decode()


def _retry_cause(error: BaseException) -> str | None:
    if isinstance(error, ToolRetryError):
        retry = getattr(error.tool_retry, "retry", None)
        return str(getattr(retry, "cause", None) or "model_retry")
    if isinstance(error, ModelRetry):
        return "model_retry"
    if isinstance(error, ValidationError):
        return "validation_error"
    return None


def _output_messages(response: ModelResponse) -> str:
    """``gen_ai.output.messages``: what the model answered, text and tool calls."""
    parts: list[dict[str, Any]] = []
    for part in response.parts:
        if isinstance(part, ToolCallPart):
            parts.append(
                {
                    "type": "tool_call",
                    "id": part.tool_call_id,
                    "name": part.tool_name,
                    "arguments": part.args_as_dict(),
                }
            )
        elif isinstance(part, TextPart):
            parts.append({"type": "text", "content": part.content})
        else:
            parts.append({"type": getattr(part, "part_kind", "other")})
    message: dict[str, Any] = {"role": "assistant", "parts": parts}
    if response.finish_reason:
        message["finish_reason"] = response.finish_reason
    return _json([message])


@dataclass
class TracingCapability(AbstractCapability[Any]):
    """Opens the spans; ``content`` adds prompts, answers, arguments and results."""

    tracer: Any
    content: bool = False

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def wrap_run(self, ctx: Any, *, handler: Callable[[], Awaitable[Any]]) -> Any:
        name = (ctx.agent.name if ctx.agent is not None else None) or "co"
        attrs = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
            "gen_ai.conversation.id": ctx.conversation_id or "",
        }
        with self.tracer.start_as_current_span(
            f"invoke_agent {name}", attributes=attrs, **_OPTIONS
        ) as span:
            try:
                result = await handler()
            except BaseException as error:
                mark_failed(span, error, self.content)
                raise
            if self.content:
                span.set_attribute("final_result", _json(result.output))
            return result

    async def wrap_model_request(
        self,
        ctx: Any,
        *,
        request_context: Any,
        handler: Callable[[Any], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        model = request_context.model
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model.model_name,
            "gen_ai.provider.name": model.system,
        }
        base_url = getattr(model, "base_url", None)
        if base_url and (host := urlparse(base_url).hostname):
            attrs["server.address"] = host
        # Not made the current span: nothing of Co's runs inside a request (streamed, it
        # runs in a task of its own), and attaching it to the context would cost every time.
        span = self.tracer.start_span(f"chat {model.model_name}", attributes=attrs)
        try:
            response = await handler(request_context)
        except BaseException as error:
            mark_failed(span, error, self.content)
            raise
        else:
            span.set_attributes(self._response_attributes(request_context, response))
            return response
        finally:
            span.end()

    def _response_attributes(self, request_context: Any, response: ModelResponse) -> dict[str, Any]:
        attrs: dict[str, Any] = dict(response.usage.opentelemetry_attributes())
        if response.model_name:
            attrs["gen_ai.response.model"] = response.model_name
        if response.provider_response_id:
            attrs["gen_ai.response.id"] = response.provider_response_id
        if response.finish_reason:
            attrs["gen_ai.response.finish_reasons"] = [response.finish_reason]
        if self.content:  # the answer, and the whole conversation so far: opt-in only
            from pydantic_ai.models.instrumented import InstrumentationSettings

            attrs["gen_ai.output.messages"] = _output_messages(response)
            otel = InstrumentationSettings(include_binary_content=False)
            messages = otel.messages_to_otel_messages(list(request_context.messages))
            attrs["gen_ai.input.messages"] = _json(messages)
            params = request_context.model_request_parameters
            instructions = "\n\n".join(p.content for p in params.instruction_parts or [])
            attrs.update(otel.system_instructions_attributes(instructions or None))
        return attrs

    def _tool_attributes(self, call: ToolCallPart, args: Any) -> dict[str, Any]:
        attrs = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.tool_name,
            "gen_ai.tool.call.id": call.tool_call_id,
        }
        if self.content:
            attrs["gen_ai.tool.call.arguments"] = _json(args)
        return attrs

    async def wrap_tool_execute(
        self,
        ctx: Any,
        *,
        call: ToolCallPart,
        tool_def: Any,
        args: dict[str, Any],
        handler: Callable[[dict[str, Any]], Awaitable[Any]],
    ) -> Any:
        attrs = self._tool_attributes(call, args)
        # the current span while the call runs (the policy decision and the tool's own
        # spans go on or under it), attached by hand: the context-manager way costs more
        span = self.tracer.start_span(f"execute_tool {call.tool_name}", attributes=attrs)
        token = attach(set_span_in_context(span))
        try:
            result = await handler(args)
        except _CONTROL_FLOW:
            raise  # held for approval, deferred or skipped: co.policy.* says which
        except BaseException as error:
            if (cause := _retry_cause(error)) is not None:
                span.set_attribute("pydantic_ai.tool.retry.cause", cause)
            mark_failed(span, error, self.content)
            raise
        else:
            if self.content:
                span.set_attribute("gen_ai.tool.call.result", _json(result))
            return result
        finally:
            detach(token)
            span.end()

    async def on_tool_validate_error(
        self, ctx: Any, *, call: ToolCallPart, tool_def: Any, args: Any, error: Any
    ) -> Any:
        """A call whose arguments did not validate: a failed tool span that ran nothing."""
        attrs = self._tool_attributes(call, call.args)
        attrs["pydantic_ai.tool.failure_stage"] = "validation"
        with self.tracer.start_as_current_span(
            f"execute_tool {call.tool_name}", attributes=attrs, **_OPTIONS
        ) as span:
            if (cause := _retry_cause(error)) is not None:
                span.set_attribute("pydantic_ai.tool.retry.cause", cause)
            mark_failed(span, error, self.content)
        raise error
