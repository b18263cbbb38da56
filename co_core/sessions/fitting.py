"""The pydantic-ai capability that fits every request to the model's context window.

Imported only on the agent path (it imports pydantic-ai at module level).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import RetryModelRequest
from pydantic_ai.messages import ModelResponse

from co_core.sessions.counting import Counting
from co_core.sessions.overflow import context_overflow, too_long
from co_core.sessions.tokens import ContextMeter, context_window, fit, measure


@dataclass
class FitContext(AbstractCapability[Any]):
    """Trims old tool outputs and drops the oldest turns so each request fits the window.

    Counts with the serving model's counter (``counting``), before each attempt
    (``prepare_model_request``: the model that will answer is known there). Only the
    request changes; the run's history keeps every message. When the model still says
    the request is too long, the counter learns the model's own numbers and the request
    is fitted again and sent once more; a second refusal ends the turn with one line.
    ``meter`` records what the last request carried, for ``/context``.
    """

    section: Any = None
    meter: ContextMeter = field(default_factory=ContextMeter)
    counting: Counting = field(default_factory=Counting)
    _sent: int = field(default=0, repr=False)  # unscaled tokens of the last attempt
    _retried: bool = field(default=False, repr=False)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        self._retried = False  # a new request step: it may be retried once
        return request_context

    async def prepare_model_request(self, ctx: Any, request_context: Any) -> Any:
        model = request_context.model
        counter = self.counting.counter(model)
        sizes = self.counting.sizes(model)
        params = request_context.model_request_parameters
        system = [p.content for p in (params.instruction_parts or [])]
        tool_defs = [*params.function_tools, *(getattr(params, "output_tools", None) or [])]
        window = counter.effective(context_window(model, self.section))
        reserve = int(getattr(self.section, "reserve_output", 1024))
        prompt, tools = await counter.fixed(system, tool_defs)
        budget = max(counter.budget(window, reserve) - prompt - tools, 0)
        trim = int(getattr(self.section, "trim_tool_output", 2000))
        messages = request_context.messages
        fitted, report = await fit(messages, budget, sizes=sizes, trim_tokens=trim)
        fill = (prompt + tools + report.tokens_after) * counter.scale / window
        if counter.wants_check(fill):  # an estimate near the limit: the provider counts
            scale = counter.scale
            real = await counter.check(fitted)
            if real:
                counter.observe(report.tokens_after, real)
            if counter.scale > scale:
                budget = max(counter.budget(window, reserve) - prompt - tools, 0)
                fitted, report = await fit(messages, budget, sizes=sizes, trim_tokens=trim)
        request_context.messages = fitted
        self._sent = prompt + tools + report.tokens_after
        self.meter.system, self.meter.tool_defs = system, tool_defs
        self.meter.last_fit = report
        self.meter.measured(
            partial(
                measure,
                fitted,
                window,
                system=prompt,
                tools=tools,
                reserve=reserve,
                sizes=sizes,
                scale=counter.scale,
                counted_by=counter.describe,
            )
        )
        return request_context

    async def after_model_request(
        self, ctx: Any, *, request_context: Any, response: ModelResponse
    ) -> ModelResponse:
        reported = getattr(response.usage, "input_tokens", 0)
        if reported and self._sent:
            self.counting.counter(request_context.model).observe(self._sent, reported)
        return response

    async def on_model_request_error(
        self, ctx: Any, *, request_context: Any, error: Exception
    ) -> ModelResponse:
        overflow = context_overflow(error)
        if overflow is None:
            raise error
        model = request_context.model
        counter = self.counting.counter(model)
        if self._retried:
            window = overflow.window or counter.effective(context_window(model, self.section))
            raise too_long(model, window, overflow.prompt_tokens) from error
        self._retried = True
        counter.learn(overflow, self._sent)
        raise RetryModelRequest()
