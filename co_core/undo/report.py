"""What ``co changes`` and ``/changes`` show: each turn's changed paths, with diffs."""

from __future__ import annotations

import difflib
import time
from pathlib import Path

from co_core.undo.changes import Turn
from co_core.undo.state import ABSENT, DIR, FILE, SYMLINK, UNKNOWN, State

DIFF_LINES = 200  # per file; the rest is cut with a marker


def _text(state: State) -> list[str] | None:
    if state.kind == FILE and state.data is not None:
        try:
            return state.data.decode("utf-8").splitlines(keepends=True)
        except UnicodeDecodeError:
            return None
    if state.kind == ABSENT:
        return []
    return None


def _label(state: State) -> str:
    if state.kind == FILE:
        return f"file ({len(state.data or b'')} bytes)"
    if state.kind == SYMLINK:
        return f"symlink -> {(state.data or b'').decode(errors='replace')}"
    return {ABSENT: "absent", DIR: "folder", UNKNOWN: "content not kept"}.get(
        state.kind, state.kind
    )


def file_diff(path: Path, before: State, after: State) -> str:
    """A unified diff, or one line saying what kind of change it was."""
    old, new = _text(before), _text(after)
    if before.kind == ABSENT and after.kind == DIR:
        return f"created folder {path}\n"
    if old is None or new is None:
        return f"{path}: {_label(before)} -> {_label(after)}\n"
    lines = list(
        difflib.unified_diff(
            old,
            new,
            fromfile="/dev/null" if before.kind == ABSENT else f"a{path}",
            tofile="/dev/null" if after.kind == ABSENT else f"b{path}",
        )
    )
    if not lines:
        return f"{path}: unchanged\n"
    out = [line if line.endswith("\n") else line + "\n" for line in lines[:DIFF_LINES]]
    if len(lines) > DIFF_LINES:
        out.append(f"[... {len(lines) - DIFF_LINES} more diff lines not shown ...]\n")
    return "".join(out)


def format_turns(turns: list[Turn], *, diffs: bool = True) -> str:
    if not turns:
        return "No file changes recorded."
    parts = []
    for turn in turns:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(turn.at))
        flags = " (undone)" if turn.undone else ""
        note = f" {turn.note}" if turn.note else ""
        parts.append(f"turn {turn.turn}{note}{flags}, {when}, {len(turn.changes)} path(s):")
        for change in turn.changes:
            after = change.after or State.of(change.path)
            via = f" [{change.source}]" if change.source != "tool" else ""
            parts.append(f"  {change.path}{via}")
            if diffs:
                parts.append(file_diff(change.path, change.before, after).rstrip("\n"))
    return "\n".join(parts)
