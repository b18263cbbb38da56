"""``co plugin new NAME``: the command line side of :mod:`co_core.scaffold`.

Imported only inside the ``register_commands`` hook, so typer at the top is fine.
"""

import sys
from pathlib import Path
from typing import Annotated, Any

import typer


def register(app: Any) -> None:
    plugin_app = typer.Typer(help="Write your own Co plugins.", no_args_is_help=True)

    @plugin_app.command("new")
    def new(
        name: Annotated[str, typer.Argument(help="The plugin's name: 'weather' makes co-weather.")],
        folder: Annotated[
            Path, typer.Option("--dir", help="Where to create the co-NAME folder.")
        ] = Path("."),
    ) -> None:
        """Create a complete co-NAME package: hooks, a sample tool, settings, tests, README."""
        from co_core.errors import CoError
        from co_core.scaffold import create, plugin_name

        try:
            root = create(name, folder)
        except CoError as exc:
            print(f"co: error: {exc}", file=sys.stderr)
            raise typer.Exit(1) from None
        ident = plugin_name(name).replace("-", "_")
        print(f"Created {root}")
        print("Next:")
        print(f"  cd {root}")
        print("  python -m venv .venv && . .venv/bin/activate")
        print("  pip install -e '.[test]'     # or: uv venv && uv pip install -e '.[test]'")
        print("  pytest                       # the generated tests pass")
        print(f"  co plugins                   # lists {plugin_name(name)!r}")
        print(f"Start with co_{ident}/plugin.py and docs/plugins.md (the author guide).")

    app.add_typer(plugin_app, name="plugin")
