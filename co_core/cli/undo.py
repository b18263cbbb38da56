"""``co changes``, ``co undo`` and the ``/undo`` slash command, over the change record."""

from __future__ import annotations

import difflib
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from co_core.undo.changes import ChangeRecord, Turn, UndoError
from co_core.undo.state import ABSENT, DIR, FILE, SYMLINK, UNKNOWN, State

if TYPE_CHECKING:
    from co_core.kernel.deps import CoDeps

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


def latest_session() -> str | None:
    from co_core.undo.changes import sessions

    found = sessions()
    return found[0][0] if found else None


def _record(session: str | None) -> ChangeRecord:
    from co_core.kernel.errors import CoError

    chosen = session or latest_session()
    if chosen is None:
        raise CoError("no file changes recorded yet")
    return ChangeRecord(chosen)


# -- slash command ------------------------------------------------------------------------


def undo_slash(arg: str, deps: CoDeps) -> str:
    """``/undo`` reverts the last turn's file changes; ``/undo 3`` a chosen turn."""
    from co_core.undo.changes import UndoError

    arg = arg.strip()
    force = "--force" in arg.split()
    arg = " ".join(a for a in arg.split() if a != "--force")
    if arg and not arg.isdigit():
        return "usage: /undo [turn number] [--force]"
    try:
        return _record_of(deps).undo(int(arg) if arg else None, force=force).text()
    except UndoError as exc:
        return str(exc)


def changes_slash(arg: str, deps: CoDeps) -> str:
    """``/changes`` lists this session's file changes with diffs."""
    return format_turns(_record_of(deps).turns(), diffs=arg.strip() != "--brief")


def _record_of(deps: CoDeps) -> ChangeRecord:
    changes = deps.changes
    if not isinstance(changes, ChangeRecord):  # another plugin replaced core.changes
        raise UndoError("/undo works with Co's own change record only")
    return changes


# -- CLI ------------------------------------------------------------------------------------


def register(app: typer.Typer) -> None:
    session_help = "session id (default: the one that changed files last)"

    @app.command("changes")
    def changes_command(
        session: str = typer.Option("", "--session", help=session_help),
        brief: bool = typer.Option(False, "--brief", help="Paths only, no diffs."),
    ) -> None:
        """List the files Co changed, turn by turn, with diffs."""
        from co_core.undo.changes import load_turns

        record = _record(session or None)
        print(f"session {record.session_id}")
        turns = load_turns(record.session_id, record.db_path or _default_db())
        print(format_turns(turns, diffs=not brief))

    @app.command("undo")
    def undo_command(
        turn: int = typer.Argument(0, help="turn to revert (default: the last one)"),
        session: str = typer.Option("", "--session", help=session_help),
        force: bool = typer.Option(False, "--force", help="Also revert files changed again later."),
    ) -> None:
        """Revert the file changes of Co's last turn (or a chosen one)."""
        record = _record(session or None)
        print(f"session {record.session_id}")
        print(record.undo(turn or None, force=force).text())


def _default_db() -> Path:
    from co_core.undo.changes import default_db

    return default_db()
