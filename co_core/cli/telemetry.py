"""``co logs`` (Datasette on the trace database) and ``co traces`` (last turns as trees)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from co_core.ui.render import visible


def visible_line(value: object) -> str:
    return visible(value, one_line=True)


def _database(ctx: typer.Context) -> Path:
    from co_core.kernel.app import running_app
    from co_core.telemetry.settings import telemetry_section

    return telemetry_section(running_app(ctx).settings).database()


def _fail(message: str) -> typer.Exit:
    """One error line; the text is shown as is (no Rich markup, no control characters)."""
    from rich.markup import escape

    from co_core.cli.output import fail

    return fail(escape(visible_line(message)))


def _no_traces(path: Path) -> typer.Exit:
    return _fail(
        f"no traces yet in {path}: they are recorded by `co chat` and `co ask` "
        "while telemetry.enabled and telemetry.sqlite are on"
    )


def register(app: typer.Typer) -> None:
    @app.command("logs")
    def logs(
        ctx: typer.Context,
        port: Annotated[
            int, typer.Option("--port", help="Port to serve on (0: any free one).")
        ] = 8001,
        no_browser: Annotated[
            bool, typer.Option("--no-browser", help="Do not open a web browser.")
        ] = False,
    ) -> None:
        """Browse traces in Datasette: turns, tool calls, tokens and cost (Ctrl-C stops it)."""
        from co_core.telemetry.datasette_meta import metadata
        from co_core.telemetry.view import database_missing

        path = _database(ctx)
        if database_missing(path):
            raise _no_traces(path)
        try:
            import datasette  # noqa: F401
        except ImportError:
            raise _fail(
                "co logs needs Datasette, which is not installed: "
                "pip install 'co-core[logs]' (or pip install datasette)"
            ) from None
        with tempfile.TemporaryDirectory(prefix="co-logs-") as tmp:
            meta = Path(tmp) / "metadata.json"
            meta.write_text(json.dumps(metadata(path), indent=2), encoding="utf-8")
            command = [
                sys.executable, "-m", "datasette", "serve", str(path),
                "--metadata", str(meta), "--host", "127.0.0.1", "--port", str(port),
            ]  # fmt: skip
            if not no_browser:
                command.append("--open")
            where = f"http://127.0.0.1:{port}/" if port else "a free port (see below)"
            print(f"Serving {path} at {where}; Ctrl-C stops it.", flush=True)
            try:
                code = subprocess.call(command)
            except KeyboardInterrupt:
                code = 0
        if code not in (0, -2, 130):
            raise typer.Exit(code)

    @app.command("traces")
    def traces(
        ctx: typer.Context,
        n: Annotated[int, typer.Option("-n", "--number", min=1, help="How many turns.")] = 5,
    ) -> None:
        """Show the last turns as trees: spans, durations, tokens, tool status."""
        from rich.console import Console
        from rich.markup import escape
        from rich.tree import Tree

        from co_core.telemetry.view import database_missing, label, last_turns

        path = _database(ctx)
        if database_missing(path):
            raise _no_traces(path)
        turns = last_turns(path, n)
        if not turns:
            raise _no_traces(path)
        console = Console(highlight=False)

        def text(node: Any, root: bool = False) -> str:
            line = escape(visible_line(label(node, root)))
            if node.error:
                return f"[red]{line}[/red]"
            return f"[bold]{line}[/bold]" if root else line

        def grow(tree: Any, node: Any) -> None:
            for child in node.children:
                grow(tree.add(text(child)), child)

        for turn in turns:
            tree = Tree(text(turn, root=True))
            grow(tree, turn)
            console.print(tree)
