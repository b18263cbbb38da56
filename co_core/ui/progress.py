"""Progress the user watches: a spinner line for long work (``/compact``) and a download's bar
(``co chat``, ``co models pull``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


class Working:
    """A spinner line for long work: what is being done, the seconds so far, and how much
    the model has written (redrawn by rich's Live several times a second)."""

    def __init__(self, what: str, counting: str = "characters written") -> None:
        from rich.spinner import Spinner

        self.what, self.counting = what, counting
        self.written, self.started = 0, time.monotonic()
        self.spinner = Spinner("dots")

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started

    def wrote(self, characters: int) -> None:
        self.written = characters

    def __rich__(self) -> Any:
        more = f", {self.written:,} {self.counting}" if self.written else ""
        self.spinner.update(text=f" {self.what}… {self.seconds:.0f} s{more}")
        return self.spinner


@contextlib.contextmanager
def download_bar(
    console: Console, title: str, total: int | None
) -> Iterator[Callable[[int, int], None]]:
    """A live bar on ``console``; yields ``update(done, total)`` (safe from any thread).

    On a terminal it redraws in place; elsewhere (a pipe, a log) it prints a line at every
    tenth of the way, so a script's log shows progress without a flood.
    """
    if not console.is_terminal:
        shown = [-1]

        def line(done: int, size: int) -> None:
            tenth = done * 10 // size if size else 0
            if tenth != shown[0]:
                shown[0] = tenth
                console.print(f"{title}: {done * 100 // max(size, 1)}% of {size} bytes")

        yield line
        return

    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(title, total=total)

        def update(done: int, size: int) -> None:
            bar.update(task, completed=done, total=size)

        yield update
