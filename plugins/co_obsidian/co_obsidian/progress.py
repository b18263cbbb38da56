"""A progress bar for index builds: on stderr, only on a terminal, only when it is slow."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

SHOW_AFTER = 0.4  # seconds: quick builds stay silent


class BuildProgress:
    def __init__(
        self,
        total: int,
        label: str = "Indexing Obsidian vault",
        show: bool | Callable[[], bool] = True,
    ):
        self.total = total
        self.show = show
        self.label = label
        self.done = 0
        self.started = time.monotonic()
        self._bar: Any = None
        self._task: Any = None

    def advance(self, count: int = 1) -> None:
        self.done += count
        if self._bar is None:
            show = self.show() if callable(self.show) else self.show
            if not show or time.monotonic() - self.started < SHOW_AFTER:
                return
            if not sys.stderr.isatty():
                return
            from rich.console import Console
            from rich.progress import Progress

            self._bar = Progress(console=Console(file=sys.stderr), transient=True)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        self._bar.update(self._task, completed=self.done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
