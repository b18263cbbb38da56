"""Stop a turn early when the model is going round in circles.

The loop guard listens to the call pipeline and compares calls the way the pipeline
does: a resolved call by its canonical arguments (``list_files()`` and
``list_files(path=".")`` are one call when the tool's resolver fills in the default), a
call that never got that far by the arguments as written. It ends the turn with one
readable line (``co_core.ui.failures``), well before the request limit:

- a call of a tool whose plugin is not set up ends the turn with the line that says how
  to set it up, as the answer (a model that reaches for Gmail gets "run `co google login`");
- the same call as one that already failed, was refused or denied in this turn ends it
  with :class:`RepeatedCall`, and so does the same call made a third time in a row;
- more calls after a run of failed ones end it with :class:`FailedCalls`;
- a second empty answer ends it with :class:`NoAnswer`.

The first and the last two look at a whole model response (the policy gate shows it
each one, before its calls are seen); the repeats are caught as each call is seen or
resolved, against the calls of earlier responses (the calls of one response are made
together: several spellings of one file in one response are each decided, not a loop).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from co_core.agent.calls.record import FAILED, Event, ToolCallRecord
from co_core.kernel.errors import CoError

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


def _same(one: ToolCallRecord, other: ToolCallRecord) -> bool:
    """One call twice: by the canonical arguments when both were resolved, else as written."""
    if one.tool != other.tool or one.resolved != other.resolved:
        return False
    if one.resolved:
        return dict(one.call.args) == dict(other.call.args)
    return dict(one.asked) == dict(other.asked)


@dataclass
class LoopGuard:
    """A listener of the call pipeline; the gate shows it each model response first."""

    blocked: Callable[[str], str | None]  # why a tool cannot work now (not set up), or None
    error_run: int = ERROR_RUN
    _ended: list[ToolCallRecord] = field(default_factory=list)  # the model's, in order
    _resolved: list[ToolCallRecord] = field(default_factory=list)
    _earlier: tuple[list[ToolCallRecord], list[ToolCallRecord]] = ([], [])  # before this response
    _empty: int = 0

    def new_turn(self) -> None:
        self._ended, self._resolved, self._earlier, self._empty = [], [], ([], []), 0

    def __call__(self, event: Event, record: ToolCallRecord) -> None:
        if event == "seen" or event == "resolved":
            self._repeated(record)
            if event == "resolved":
                self._in_a_row(record)
                self._resolved.append(record)
        elif event == "ended" and not record.excused:
            self._ended.append(record)

    def _repeated(self, record: ToolCallRecord) -> None:
        for earlier in self._earlier[0]:
            if earlier.status in FAILED and _same(earlier, record):
                call, result = _shown(earlier)
                raise RepeatedCall(
                    f"turn stopped: the model repeated a call that failed: {call}: {result}"
                )

    def _in_a_row(self, record: ToolCallRecord) -> None:
        last = self._earlier[1][-(SAME_IN_A_ROW - 1) :]
        if len(last) == SAME_IN_A_ROW - 1 and all(_same(earlier, record) for earlier in last):
            call, _ = _shown(record)
            raise RepeatedCall(
                f"turn stopped: the model made the same call {SAME_IN_A_ROW} times in a row: {call}"
            )

    def look(self, response: ModelResponse) -> ModelResponse:
        """A model response, before its calls are seen: answered for the model when it
        reaches for a tool that is not set up; the turn ended when it keeps failing."""
        self._earlier = (list(self._ended), list(self._resolved))
        parts = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if not parts:
            self._no_answer(response)
            return response
        for part in parts:
            why = self.blocked(part.tool_name)
            if why is not None:
                return dataclasses.replace(response, parts=[TextPart(_plugin_line(why))])
        run = 0
        for record in reversed(self._ended):
            if record.status not in FAILED:
                break
            run += 1
        if run >= self.error_run:
            call, result = _shown(self._ended[-1])
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
