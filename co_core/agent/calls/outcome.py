"""How a call ended, read from what running it raised: the one mapping, for every driver.

pydantic-ai (``co chat``, ``co ask``) and ``co mcp serve`` run tools differently, but
both hand the exception to :func:`outcome`, so a call that fails one way ends with the
same status and the same words whichever way it was made:

- ``retry``: the model must fix its call (``ModelRetry``, arguments that do not
  validate, a call Co refuses as asked);
- ``timed out``: the tool did not answer in time (``TimeoutError``, e.g. an MCP server's
  ``call_timeout``); the model is told, not invited to try again;
- ``interrupted``: Ctrl+C, or the turn was cancelled;
- ``error``: anything else (``ToolFailed``, an exception in the tool).

pydantic-ai wraps what a tool raised (``ToolRetryError``, ``ToolFailedError``); the
wrapped exception is read, so the wrapper does not change the answer.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import ValidationError
from pydantic_ai.exceptions import (
    ApprovalRequired,
    CallDeferred,
    ModelRetry,
    SkipToolExecution,
    ToolFailed,
    ToolFailedError,
    ToolRetryError,
)

from co_core.agent.calls.record import Ending
from co_core.kernel.tools import CallRefused

HELD = (ApprovalRequired, CallDeferred, SkipToolExecution)  # not an end: it runs later, or not
INTERRUPTED = "Interrupted by user."


class CallTimedOut(ToolFailed, TimeoutError):
    """A tool that did not answer within its time limit (an MCP server's ``call_timeout``).

    A ``ToolFailed``: pydantic-ai tells the model the call failed, without inviting it to
    make the same call again.
    """


def bad_arguments(error: ValidationError) -> str:
    """``bad arguments: path: Field required`` (one line per problem, joined)."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in error.errors()
    )
    return f"bad arguments: {problems}"


def _cause(error: BaseException) -> BaseException:
    """What the tool raised, under pydantic-ai's wrapper."""
    if isinstance(error, ToolRetryError | ToolFailedError) and error.__cause__ is not None:
        return error.__cause__
    return error


def outcome(error: BaseException) -> tuple[Ending, str] | None:
    """The status and the words a call ends with, given what running it raised; None for
    pydantic-ai's control flow (held for approval, deferred, skipped), which is no end."""
    if isinstance(error, HELD):
        return None
    cause = _cause(error)
    if isinstance(cause, asyncio.CancelledError | KeyboardInterrupt):
        return "interrupted", INTERRUPTED
    if isinstance(cause, TimeoutError):
        return "timed out", _text(cause) or "timed out"
    if isinstance(cause, ValidationError):
        return "retry", bad_arguments(cause)
    if isinstance(cause, ModelRetry):
        return "retry", cause.message
    if isinstance(cause, CallRefused):
        return "retry", str(cause)
    if isinstance(error, ToolRetryError):
        return "retry", str(error.tool_retry.content)
    if isinstance(cause, ToolFailed):
        return "error", cause.message
    if isinstance(cause, ToolFailedError):
        return "error", str(cause)
    return "error", _text(cause) or type(cause).__name__


def _text(error: Any) -> str:
    """What the error says, whole: its lines are kept (each place that shows it makes it
    one line itself), so what masks secrets sees a token split over two lines as one."""
    return str(error).strip()
