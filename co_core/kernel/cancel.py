"""A tool call told to stop: what a tool that blocks a thread listens to.

Ctrl+C, a closed terminal or SIGTERM cancel the turn's asyncio task. A tool written as a
plain function runs in a worker thread, which no cancellation reaches: the turn would end
while the tool's work (a command in a sandbox, say) ran on until its own timeout. So the
call pipeline gives each call a :class:`threading.Event`, sets it when the call is
cancelled, and waits a moment for the tool to end what it started. The tool reads it with
:func:`cancel_event` (the worker thread runs in the call's context, so it sees its own
call's event) and stops when it is set. A tool that asked for its event is waited for; a
tool that never did (an async one, which cancellation reaches by itself) is not.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class CallStop(threading.Event):
    """One call's cancel event; ``listened`` once the tool asked for it."""

    listened = False


_EVENT: ContextVar[CallStop | None] = ContextVar("co_cancel_event", default=None)


def cancel_event() -> threading.Event:
    """The running tool call's cancel event: set once the call is cancelled (Ctrl+C, a
    closed terminal), and then the tool should end what it started and return (or raise)
    soon. Outside a call, an event that is never set."""
    event = _EVENT.get()
    if event is None:
        return threading.Event()
    event.listened = True
    return event


@contextmanager
def cancellable() -> Iterator[CallStop]:
    """A new cancel event for what starts inside (tasks and worker threads copy it)."""
    event = CallStop()
    token = _EVENT.set(event)
    try:
        yield event
    finally:
        _EVENT.reset(token)
