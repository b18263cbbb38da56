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


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _Stopped(Exception):
    def __init__(self, signum: int) -> None:
        self.signum = signum


def _serve(command: list[str]) -> int:
    """Run Datasette until it exits or ``co logs`` is told to stop; never leave it running.

    Ctrl-C reaches both through the terminal. A closed terminal (SIGHUP) or a kill
    (SIGTERM) of ``co logs`` alone is passed on, and on Linux the kernel stops Datasette
    if ``co logs`` dies without a word (PR_SET_PDEATHSIG).
    """
    import signal

    def stopped(signum: int, frame: object) -> None:
        raise _Stopped(signum)

    caught = (signal.SIGHUP, signal.SIGTERM)
    previous = {sig: signal.signal(sig, stopped) for sig in caught}
    process: subprocess.Popen[bytes] | None = None
    try:
        process = subprocess.Popen(command, preexec_fn=_die_with_parent)
        return process.wait()
    except KeyboardInterrupt:
        return 130
    except _Stopped as stop:
        return 128 + stop.signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent dies (Linux; elsewhere a no-op)."""
    if sys.platform != "linux":
        return
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


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
        from importlib.resources import files

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
        if port == 0:
            port = _free_port()
        with tempfile.TemporaryDirectory(prefix="co-logs-") as tmp:
            meta = Path(tmp) / "metadata.json"
            meta.write_text(json.dumps(metadata(path), indent=2), encoding="utf-8")
            plugins = Path(tmp) / "plugins"
            plugins.mkdir()
            (plugins / "co_cells.py").write_text(
                "from co_core.telemetry.datasette_cells import render_cell  # noqa: F401\n",
                encoding="utf-8",
            )
            command = [
                sys.executable, "-m", "datasette", "serve", str(path),
                "--metadata", str(meta), "--plugins-dir", str(plugins),
                "--template-dir", str(files("co_core.telemetry") / "datasette_templates"),
                "--host", "127.0.0.1", "--port", str(port),
            ]  # fmt: skip
            if not no_browser:
                command.append("--open")
            print(f"Serving {path} at http://127.0.0.1:{port}/; Ctrl-C stops it.", flush=True)
            code = _serve(command)
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
