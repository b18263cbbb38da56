"""Why the running tool call may run, as its tool sees it: ``co_core.current_permit()``.

Co's call pipeline (``co chat``, ``co ask``, ``co mcp serve``) sets it just before a tool
runs and clears it after. A tool that can run a call more or less confined reads it:
co-shell runs a command that only a read-only preset allowed with every path read-only.
Outside the pipeline (a tool called directly, a plugin's own test) there is none, and a
tool runs as it always does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Permit:
    """What let this call run."""

    source: str  # the level that allowed it ("default", "user", "flag", ...), or "answer"
    rule: str | None = None  # the rule, or the preset's row, that allowed it
    # allowed only because a read-only preset's table lists it: the tool must run it so
    # that it cannot write (it is asked about otherwise)
    read_only: bool = False


_CURRENT: ContextVar[Permit | None] = ContextVar("co_permit", default=None)


def current_permit() -> Permit | None:
    """The permit of the tool call running in this context (None outside Co's pipeline)."""
    return _CURRENT.get()


@contextmanager
def running_with(permit: Permit) -> Iterator[None]:
    """Run a tool call with this permit (the call pipeline's, once per call)."""
    token = _CURRENT.set(permit)
    try:
        yield
    finally:
        _CURRENT.reset(token)
