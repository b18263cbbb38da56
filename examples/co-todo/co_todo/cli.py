"""``co todo list``: imported only when Co registers commands, so typer can sit at the top."""

from __future__ import annotations

import typer

from co_core import current_app
from co_todo.settings import TodoSettings
from co_todo.store import TodoStore

todo_app = typer.Typer(help="Your todo list.", no_args_is_help=True)


@todo_app.command("list")
def list_command(ctx: typer.Context) -> None:
    """Print every todo."""
    settings = current_app(ctx).settings.section(TodoSettings)  # typed: a TodoSettings
    store = TodoStore(settings.file)
    for number, title in enumerate(store.all(), 1):
        print(f"{number}. {title}")
