"""Tab completion of ``@path`` at the ``co chat`` prompt: the workspace's files and
folders, one path segment at a time, as a shell completes them.

What git ignores is left out (co_core.kernel.gitfiles: git itself says what it ignores).
The listing is kept for a few seconds, so typing stays quick in a large tree, and a
failure to list never gets in the way of typing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import Completer, Completion

from co_core.agent.mentions import MENTION
from co_core.kernel.gitfiles import workspace_files

KEEP = 5.0  # seconds a listing is reused
SHOWN = 200  # completions offered at once


def entries(files: list[str], folder: str) -> list[str]:
    """What ``folder`` (``""``: the top; else ending in ``/``) holds: its files, and its
    subfolders written with a ``/`` after them."""
    out: set[str] = set()
    for path in files:
        if not path.startswith(folder):
            continue
        rest = path[len(folder) :]
        head, slash, _ = rest.partition("/")
        out.add(folder + head + slash)
    return sorted(out)


class MentionCompleter(Completer):
    """Completes the ``@path`` being typed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: list[str] = []
        self._at = 0.0
        self._lock = threading.Lock()

    def files(self) -> list[str]:
        with self._lock:
            if time.monotonic() - self._at > KEEP:
                try:
                    self._files = workspace_files(self.root)
                except Exception:  # completion must never break typing
                    self._files = []
                self._at = time.monotonic()
            return self._files

    def get_completions(self, document: Any, complete_event: Any) -> Iterator[Completion]:
        before = document.text_before_cursor
        start = before.rfind("@")
        if start < 0 or (start > 0 and not before[start - 1].isspace()):
            return
        typed = before[start:]
        if " " in typed or not MENTION.fullmatch(typed + ("x" if typed == "@" else "")):
            return
        path = typed[1:]
        folder = path[: path.rfind("/") + 1]
        shown = 0
        for entry in entries(self.files(), folder):
            if entry.startswith(path) and entry != path:
                yield Completion(
                    "@" + entry,
                    start_position=-len(typed),
                    display=entry[len(folder) :] or entry,
                    display_meta="folder" if entry.endswith("/") else "",
                )
                shown += 1
                if shown >= SHOWN:
                    return
