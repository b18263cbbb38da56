"""``co changes``, ``co undo`` and the ``/undo`` slash command, over the change record."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # the change record imports sqlite3: loaded when a command runs
    from co_core.kernel.deps import CoDeps
    from co_core.undo.changes import ChangeRecord


def latest_session() -> str | None:
    from co_core.undo.changes import sessions

    found = sessions()
    return found[0][0] if found else None


def _record(session: str | None) -> ChangeRecord:
    from co_core.kernel.errors import CoError
    from co_core.undo.changes import ChangeRecord

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
    from co_core.undo.report import format_turns

    return format_turns(_record_of(deps).turns(), diffs=arg.strip() != "--brief")


def _record_of(deps: CoDeps) -> ChangeRecord:
    from co_core.undo.changes import ChangeRecord, UndoError

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
        from co_core.undo.report import format_turns

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
