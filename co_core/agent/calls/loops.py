"""Stop a turn early when the model is going round in circles.

The loop guard compares calls the way the pipeline does: a resolved call by its canonical
arguments (``list_files()`` and ``list_files(path=".")`` are one call when the tool's
resolver fills in the default), a call that never got that far by the arguments as
written. It never acts itself: it gives the call pipeline a :class:`Verdict`, and the
pipeline ends the calls concerned (``not set up``, ``stopped``) and ends the turn with one
readable line (``co_core.ui.failures``), well before the request limit:

- a call of a tool whose plugin is not set up: Co answers in the model's place with the
  line that says how to set it up (a model that reaches for Gmail gets "run `co google
  login`");
- the same call as one that already failed, was refused or denied in this turn ends it
  with :class:`RepeatedCall`, and so does the same call made a third time in a row;
- more calls after a run of failed ones end it with :class:`FailedCalls`;
- a second empty answer ends it with :class:`NoAnswer`.

The first and the last two are read from a whole model response (:meth:`LoopGuard.look`,
before its calls are opened); the repeats as each call is opened or resolved
(:meth:`LoopGuard.judge`), against the calls of earlier responses (the calls of one
response are made together: several spellings of one file in one response are each
decided, not a loop). The guard learns what became of each call by listening.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class Verdict:
    """What the loop guard says: end the turn (``stop``), or answer in the model's place
    (``answer``: the calls end as ``not set up``)."""

    stop: TurnStopped | None = None
    answer: str | None = None


@dataclass
class LoopGuard:
    """Judges a turn's calls for the call pipeline; hears what became of each."""

    blocked: Callable[[str], str | None]  # why a tool cannot work now (not set up), or None
    error_run: int = ERROR_RUN
    _ended: list[ToolCallRecord] = field(default_factory=list)  # the model's, in order
    _resolved: list[ToolCallRecord] = field(default_factory=list)
    _earlier: tuple[list[ToolCallRecord], list[ToolCallRecord]] = ([], [])  # before this response
    _empty: int = 0

    def new_turn(self) -> None:
        self._ended, self._resolved, self._earlier, self._empty = [], [], ([], []), 0

    def __call__(self, event: Event, record: ToolCallRecord) -> None:
        if event == "resolved":
            self._resolved.append(record)
        elif event == "ended" and not record.excused:
            self._ended.append(record)

    def judge(self, record: ToolCallRecord) -> Verdict | None:
        """A call just opened or resolved: the turn ends when it repeats one that failed
        in an earlier response, or is the same call a third time in a row."""
        for earlier in self._earlier[0]:
            if earlier.status in FAILED and _same(earlier, record):
                call, result = _shown(earlier)
                return Verdict(
                    RepeatedCall(
                        f"turn stopped: the model repeated a call that failed: {call}: {result}"
                    )
                )
        if not record.resolved:
            return None
        last = self._earlier[1][-(SAME_IN_A_ROW - 1) :]
        if len(last) == SAME_IN_A_ROW - 1 and all(_same(earlier, record) for earlier in last):
            call, _ = _shown(record)
            return Verdict(
                RepeatedCall(
                    f"turn stopped: the model made the same call {SAME_IN_A_ROW} times in a "
                    f"row: {call}"
                )
            )
        return None

    def look(self, tools: Sequence[str], text: str) -> Verdict | None:
        """A model response (the tools it calls, its text), before its calls are opened:
        answered for the model when it reaches for a tool that is not set up; the turn
        ended when it keeps failing, or says nothing twice."""
        self._earlier = (list(self._ended), list(self._resolved))
        if not tools:
            return self._no_answer(text)
        for tool in tools:
            why = self.blocked(tool)
            if why is not None:
                return Verdict(answer=_plugin_line(why))
        run = 0
        for record in reversed(self._ended):
            if record.status not in FAILED:
                break
            run += 1
        if run >= self.error_run:
            call, result = _shown(self._ended[-1])
            return Verdict(
                FailedCalls(
                    f"turn stopped: {run} tool calls in a row failed and the model kept "
                    f"going; the last was {call}: {result}"
                )
            )
        return None

    def _no_answer(self, text: str) -> Verdict | None:
        if text.strip():
            return None
        self._empty += 1
        if self._empty >= 2:
            return Verdict(NoAnswer("turn stopped: the model gave an empty answer twice"))
        return None


def _plugin_line(why: str) -> str:
    text = why.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
