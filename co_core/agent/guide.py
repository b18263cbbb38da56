"""Co steers models too small to steer themselves (the built-in ``local`` SmolLM2).

A tiny model rarely decides on its own to call a tool, cannot fill in a call's arguments
from scratch, and does not relay a result, a denial or a setup hint faithfully. For a
model that says it is small (``co_small``), Co takes over those steps:

- on a turn's first request, when the user's words clearly match a tool (its BM25 score
  at least ``CLEAR_MATCH``): if that tool's plugin is not set up, Co answers with the
  line that says how (unless a tool that works matches about as well, ``CLOSE``);
  otherwise the model may answer only with a call of that tool, its string arguments
  copied from the user's words (the grammar of :mod:`co_core.agent.constrained`);
- once calls have ended, Co answers with what they returned (or why they failed or were
  denied) instead of asking the model to retell it.

Without a clear match the model answers freely (text, or a call it chooses). Larger
models never see any of this.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse, TextPart

from co_core.agent.bm25 import query_weights
from co_core.agent.calls import CallLog, ToolCallRecord
from co_core.agent.toolbox import FIND_TOOLS, Toolbox, latest_prompt
from co_core.kernel.deps import CoDeps

CLEAR_MATCH = 3.0  # the best tool's score for the words to count as asking for it
CLOSE = 0.8  # a tool scoring this share of the best one matches about as well


def is_small(model: Any) -> bool:
    return bool(getattr(model, "co_small", False))


def shown(record: ToolCallRecord) -> str:
    """What a call came to, as the answer: the tool's display text, or why it did not run."""
    result = record.result
    if record.status == "ok":
        display = getattr(result, "display", None)
        return display if isinstance(display, str) else str(result)
    if record.status == "denied":
        return str(result)
    return f"{record.tool} failed: {result}"


@dataclass
class SmallModelGuide(AbstractCapability[CoDeps]):
    toolbox: Toolbox
    calls: CallLog

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def wrap_model_request(
        self, ctx: RunContext[CoDeps], *, request_context: Any, handler: Any
    ) -> Any:
        if not is_small(request_context.model):
            return await handler(request_context)
        answer = self._results() or self._route(request_context, latest_prompt(ctx.messages))
        if answer is not None:
            return ModelResponse(parts=[TextPart(answer)], model_name="co")
        return await handler(request_context)

    def _results(self) -> str | None:
        ended = [r for r in self.calls.records.values() if r.ended and r.tool != FIND_TOOLS]
        if not ended:
            return None
        return "\n\n".join(shown(r) for r in ended).strip() or "(no output)"

    def _route(self, request_context: Any, prompt: str) -> str | None:
        ranked = self.toolbox.rank_all(query_weights((prompt, 1.0)))
        if not ranked or ranked[0][1] < CLEAR_MATCH:
            return None
        best, top = ranked[0]
        why = self.toolbox.blocked_call(best)
        if why is not None:
            close = [name for name, score in ranked if score >= top * CLOSE]
            if any(self.toolbox.blocked_call(name) is None for name in close):
                return None  # a tool that works matches about as well: the model decides
            return why[:1].upper() + why[1:] + ("" if why.endswith(".") else ".")
        params = request_context.model_request_parameters
        tools = [t for t in params.function_tools if t.name == best]
        if tools:
            request_context.model_request_parameters = dataclasses.replace(
                params, function_tools=tools, allow_text_output=False
            )
        return None
