"""Tab completion of ``@path`` at the ``co chat`` prompt: the workspace's files and
folders, one path segment at a time, as a shell completes them.

What git ignores is left out (co_core.kernel.gitfiles: git itself says what it ignores).
Only the first listing is waited for; after a few seconds the next keystroke starts a new
one in a thread and is answered from the last, so completing never waits on git (a Tab
pressed while prompt_toolkit is still completing is dropped by it), and a failure to
list never gets in the way of typing. Tab itself completes at the keystroke
(``complete_now``), not in a task a completion started by typing can swallow.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import (
    CompleteEvent,
    Completer,
    Completion,
    get_common_complete_suffix,
)

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
        self._files: list[str] | None = None
        self._at = 0.0
        self._lock = threading.Lock()  # held while listing
        self._refreshing = False

    def _list(self) -> None:
        try:
            found = workspace_files(self.root)
        except Exception:  # completion must never break typing
            found = []
        self._files, self._at = found, time.monotonic()

    def _refresh(self) -> None:
        try:
            with self._lock:
                self._list()
        finally:
            self._refreshing = False

    def files(self) -> list[str]:
        if self._files is None:
            with self._lock:  # the first listing (or the one under way) is waited for
                if self._files is None:
                    self._list()
        elif time.monotonic() - self._at > KEEP and not self._refreshing:
            self._refreshing = True
            threading.Thread(target=self._refresh, name="co-complete", daemon=True).start()
        return self._files or []

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


def complete_now(event: Any) -> None:
    """Tab: the next entry of the menu shown, else what the completers say for the text as
    it is now, inserted (one completion, or the part all share) before anything else runs.

    prompt_toolkit's own Tab starts a completion task that is dropped when one started by
    typing is still pending, as happens when keys come faster than a loaded machine draws;
    a Tab must never be lost."""
    buffer = event.current_buffer
    if buffer.complete_state:
        buffer.complete_next()
        return
    if buffer.completer is None:
        return
    found = list(
        buffer.completer.get_completions(buffer.document, CompleteEvent(completion_requested=True))
    )
    if len(found) == 1:
        buffer.apply_completion(found[0])
        return
    common = get_common_complete_suffix(buffer.document, found)
    if common:
        buffer.insert_text(common, fire_event=False)
    if found:
        buffer.start_completion()  # the menu of what is left to choose
