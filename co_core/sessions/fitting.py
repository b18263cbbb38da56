"""The pydantic-ai capability that applies ``memory.fit_history`` before every request.

Imported only on the agent path (it imports pydantic-ai at module level).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pydantic_ai.capabilities import AbstractCapability

from co_core.sessions.tokens import (
    ContextMeter,
    PartSizes,
    context_window,
    fit_history,
    measure,
    text_tokens,
    tools_tokens,
)


@dataclass
class FitContext(AbstractCapability[Any]):
    """Trims old tool outputs and drops the oldest turns so each request fits the window.

    Only the request changes (``request_context.messages``); the run's history keeps every
    message. ``meter`` records what the last request carried, for ``/context``.
    """

    section: Any = None
    meter: ContextMeter = field(default_factory=ContextMeter)
    sizes: PartSizes = field(default_factory=PartSizes, repr=False)
    _tools: tuple[tuple[Any, ...], int] = field(default=((), 0), repr=False)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        params = request_context.model_request_parameters
        system = [p.content for p in (params.instruction_parts or [])]
        tool_defs = [*params.function_tools, *(getattr(params, "output_tools", None) or [])]
        window = context_window(request_context.model, self.section)
        reserve = int(getattr(self.section, "reserve_output", 1024))
        tools = self._tools_tokens(tool_defs)
        fixed = sum(text_tokens(t) for t in system) + tools
        budget = max(window - reserve - fixed, 0)
        trim = int(getattr(self.section, "trim_tool_output", 2000))
        self.sizes.next_round()
        fitted, report = fit_history(
            request_context.messages, budget, trim_tokens=trim, sizes=self.sizes
        )
        request_context.messages = fitted
        self.meter.system, self.meter.tool_defs = system, tool_defs
        self.meter.last_fit = report
        self.meter.measured(
            partial(
                measure,
                fitted,
                window,
                system=system,
                tool_defs=tool_defs,
                reserve=reserve,
                tools=tools,
            )
        )
        return request_context

    def _tools_tokens(self, tool_defs: list[Any]) -> int:
        """Tool definitions rarely change between requests: count them again only if they do."""
        key = tuple(tool_defs)
        if self._tools[0] != key:
            self._tools = (key, tools_tokens(tool_defs))
        return self._tools[1]
