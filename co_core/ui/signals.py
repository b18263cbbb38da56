"""SIGTERM and SIGHUP (the terminal was closed) end Co the way Ctrl+D does; where Ctrl+C
goes in ``co chat`` (:class:`CtrlC`).

Python's default for both is to die on the spot: no ``finally``, so the local model
server, MCP servers and sandbox cgroups were left behind. Here the first signal stops what
could hold the exit up (``abort``: a model still loading, a download), cancels the running
work (the partial turn is saved as on Ctrl+C) and lets every ``finally`` close the rest.
Should that take longer than ``GRACE`` seconds, or a second signal come, Co exits at once;
the model server still ends with it (:mod:`co_core.agent.local.tether`) and the next start
reaps anything else a dead Co left (:func:`co_core.agent.local.server.reap`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType, TracebackType
from typing import Any, TypeVar

T = TypeVar("T")

ENDING = (signal.SIGTERM, signal.SIGHUP)
GRACE = 10.0


class Ending:
    """While active (``with Ending(abort):``), SIGTERM/SIGHUP end Co cleanly.

    ``watch(task)`` names the asyncio task to cancel; without one (no event loop yet, or
    after it) the signal raises ``SystemExit`` where the main thread is, so ``finally``
    blocks still run.
    """

    def __init__(self, abort: Callable[[], None] = lambda: None) -> None:
        self.abort = abort
        self.signum: int | None = None
        self._task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._old: dict[int, Any] = {}

    @property
    def code(self) -> int:
        """The exit code a shell expects after the signal (128 + its number)."""
        return 128 + (self.signum or 0)

    def watch(self, task: asyncio.Task[Any]) -> None:
        self._task, self._loop = task, task.get_loop()

    async def run(self, work: Awaitable[T]) -> T:
        """Await ``work`` as the task a signal cancels."""
        task = asyncio.ensure_future(work)
        self.watch(task)
        return await task

    def __enter__(self) -> Ending:
        if threading.current_thread() is threading.main_thread():
            for sig in ENDING:
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:  # asked twice: now
            os._exit(128 + signum)
        self.signum = signum
        timer = threading.Timer(GRACE, os._exit, (128 + signum,))
        timer.daemon = True
        timer.start()
        try:
            self.abort()
        except Exception:  # ending anyway: the rest of the clean-up still runs
            pass
        task, loop = self._task, self._loop
        if task is not None and loop is not None and loop.is_running() and not task.done():
            loop.call_soon_threadsafe(task.cancel)
            return
        raise SystemExit(self.code)


class CtrlC:
    """Where Ctrl+C goes in ``co chat`` while no prompt reads the keyboard: to what runs
    innermost (a download started during a turn stops the download, then the turn again).

    One owner for SIGINT on the chat's event loop. Questions asked while something runs
    (an approval, a download) read Ctrl+C as a key and must not take SIGINT over:
    prompt_toolkit's own handling, when such a prompt ends, removes the loop's handler
    and puts back Python's no-op one, after which Ctrl+C did nothing at all.
    """

    def __init__(self) -> None:
        self._targets: list[Callable[[], object]] = []

    @contextlib.contextmanager
    def to(self, target: Callable[[], object]) -> Iterator[None]:
        """Ctrl+C calls ``target`` while inside (on the running loop)."""
        loop = asyncio.get_running_loop()
        self._targets.append(target)
        loop.add_signal_handler(signal.SIGINT, self._fire)
        try:
            yield
        finally:
            self._targets.remove(target)
            if self._targets:
                loop.add_signal_handler(signal.SIGINT, self._fire)
            else:
                loop.remove_signal_handler(signal.SIGINT)

    def _fire(self) -> None:
        if self._targets:
            self._targets[-1]()
