"""Stop a turn early when the model is going round in circles.

A pydantic-ai capability that looks at each model response before its calls are decided,
using the turn's call records (:mod:`co_core.agent.calls`):

- a call of a tool whose plugin is not set up ends the turn with the line that says how
  to set it up, as the answer (a model that reaches for Gmail gets "run `co google login`");
- the same call (tool and arguments) as one that already failed, was refused or denied
  in this turn ends it with :class:`RepeatedCall`, and so does a call made a third time
  in a row;
- more calls after a run of failed ones end it with :class:`FailedCalls`;
- a second empty answer ends it with :class:`NoAnswer`.

Each is one readable line (``co_core.ui.failures``), well before the request limit.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from co_core.agent.calls import CallLog, ToolCallRecord
from co_core.agent.gate import call_args
from co_core.kernel.deps import CoDeps
from co_core.kernel.errors import CoError

FAILED = ("retry", "error", "denied")
ERROR_RUN = 3  # failed calls in a row after which another call ends the turn
SAME_IN_A_ROW = 3  # the same call (tool and arguments) this many times in a row ends it
MAX_SHOWN = 160


class TurnStopped(CoError):
    """Co ended the turn before the request limit; ``hint`` says what the user can do."""

    hint = "rephrase the request, or try a larger model (--model)"


class RepeatedCall(TurnStopped):
    """The model asked again for a call that had already failed in this turn."""


class FailedCalls(TurnStopped):
    """The model kept calling tools after several failed calls in a row."""


class NoAnswer(TurnStopped):
    """The model answered with nothing, twice."""

    hint = "try again, or a larger model (--model)"


def _shown(record: ToolCallRecord) -> tuple[str, str]:
    args = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in record.call.args.items())
    result = " ".join(str(record.result or record.status).split())
    return f"{record.tool}({args})"[:MAX_SHOWN], result[:MAX_SHOWN]


def _same(record: ToolCallRecord, part: ToolCallPart) -> bool:
    return record.tool == part.tool_name and dict(record.call.args) == call_args(part)


@dataclass
class LoopGuard(AbstractCapability[CoDeps]):
    calls: CallLog
    blocked: Callable[[str], str | None]  # why a tool cannot work now (not set up), or None
    excused: Collection[str] = ()  # ids of calls that failed through no fault of the model
    error_run: int = ERROR_RUN
    _empty: int = 0

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def wrap_run(self, ctx: RunContext[CoDeps], *, handler: Any) -> Any:
        self._empty = 0  # a new turn
        return await handler()

    async def after_model_request(
        self, ctx: RunContext[CoDeps], *, request_context: Any, response: ModelResponse
    ) -> ModelResponse:
        parts = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if not parts:
            self._no_answer(response)
            return response
        for part in parts:
            why = self.blocked(part.tool_name)
            if why is not None:
                return dataclasses.replace(response, parts=[TextPart(_plugin_line(why))])
        earlier = [
            r for r in self.calls.records.values() if r.ended and r.call_id not in self.excused
        ]
        for part in parts:
            for record in earlier:
                if record.status in FAILED and _same(record, part):
                    call, result = _shown(record)
                    raise RepeatedCall(
                        f"turn stopped: the model repeated a call that failed: {call}: {result}"
                    )
        if len(earlier) >= SAME_IN_A_ROW - 1:
            last = earlier[-(SAME_IN_A_ROW - 1) :]
            for part in parts:
                if all(_same(record, part) for record in last):
                    call, _ = _shown(last[-1])
                    raise RepeatedCall(
                        f"turn stopped: the model made the same call {SAME_IN_A_ROW} times "
                        f"in a row: {call}"
                    )
        run = 0
        for record in reversed(earlier):
            if record.status not in FAILED:
                break
            run += 1
        if run >= self.error_run:
            call, result = _shown(earlier[-1])
            raise FailedCalls(
                f"turn stopped: {run} tool calls in a row failed and the model kept going; "
                f"the last was {call}: {result}"
            )
        return response

    def _no_answer(self, response: ModelResponse) -> None:
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        if text.strip():
            return
        self._empty += 1
        if self._empty >= 2:
            raise NoAnswer("turn stopped: the model gave an empty answer twice")


def _plugin_line(why: str) -> str:
    text = why.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
