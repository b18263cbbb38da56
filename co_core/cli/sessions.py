"""``co sessions list | show | delete | export``: the saved conversations.

Registered through the core's own ``register_commands`` hook. Reads the store's JSON
directly, so none of these commands imports pydantic-ai.
"""

from __future__ import annotations

import json
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from co_core.ui.render import visible

HELP = "List, show, export and delete saved conversations (co chat --resume ID continues one)."


class Format(StrEnum):
    markdown = "markdown"
    json = "json"


class Source(StrEnum):
    chat = "chat"
    ask = "ask"


def _store() -> Any:
    from co_core.sessions.store import SessionStore

    return SessionStore()


def _fail(message: str) -> typer.Exit:
    typer.echo(f"co: error: {visible(message)}", err=True)
    return typer.Exit(1)


def _find(store: Any, session: str) -> Any:
    from co_core.kernel.errors import CoError

    try:
        return store.resolve(session)
    except CoError as exc:
        raise _fail(str(exc)) from None


def register(app: typer.Typer) -> None:
    sessions_app = typer.Typer(help=HELP, rich_markup_mode=None, no_args_is_help=True)

    @sessions_app.command("list")
    def list_sessions(
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        here: Annotated[
            bool, typer.Option("--here", help="Only sessions started in this directory.")
        ] = False,
        limit: Annotated[int, typer.Option(help="Show at most this many.", min=1)] = 50,
        source: Annotated[
            Source | None,
            typer.Option("--source", help="Only chats (co chat) or only co ask runs."),
        ] = None,
    ) -> None:
        """Saved sessions, most recent first (`from` says whether co chat or co ask held it)."""
        with _store() as store:
            found = store.list(
                cwd=Path.cwd() if here else None,
                limit=limit,
                source=source.value if source else None,
            )
        if as_json:
            print(json.dumps([s.as_dict() for s in found], indent=2))
            return
        if not found:
            typer.echo("no saved sessions yet (start one with `co chat`)")
            return
        typer.echo(f"{'id':<12}  {'updated':<16}  {'turns':>5}  {'from':<4}  {'model':<20}  title")
        for s in found:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated))
            typer.echo(
                f"{s.id:<12}  {when:<16}  {s.turns:>5}  {s.source:<4}  {visible(s.model):<20}"
                f"  {visible(s.title)}"
            )

    @sessions_app.command("show")
    def show(
        session: Annotated[str, typer.Argument(help="Session id or a unique prefix.")],
    ) -> None:
        """The whole conversation, as Markdown text."""
        from co_core.sessions.export import export

        with _store() as store:
            info = _find(store, session)
            typer.echo(visible(export(store, info, "markdown")))

    @sessions_app.command("delete")
    def delete(
        session: Annotated[str, typer.Argument(help="Session id or a unique prefix.")],
    ) -> None:
        """Delete a session and its messages for good."""
        with _store() as store:
            info = _find(store, session)
            store.delete(info.id)
        typer.echo(f"deleted session {info.id} ({visible(info.title)})")

    @sessions_app.command("export")
    def export_command(
        session: Annotated[str, typer.Argument(help="Session id or a unique prefix.")],
        fmt: Annotated[
            Format, typer.Option("--format", help="markdown or json.")
        ] = Format.markdown,
        output: Annotated[
            Path | None,
            typer.Option("--output", "-o", help="Write to this file (default: stdout)."),
        ] = None,
    ) -> None:
        """The full conversation (before any compaction) as Markdown or JSON."""
        from co_core.sessions.export import export

        with _store() as store:
            info = _find(store, session)
            text = export(store, info, fmt.value)
        if output is None:
            typer.echo(text if fmt is Format.json else visible(text), nl=False)
            return
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise _fail(f"cannot write {output}: {exc.strerror}") from None
        typer.echo(f"wrote {output}")

    app.add_typer(sessions_app, name="sessions")
