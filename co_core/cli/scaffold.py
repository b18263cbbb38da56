"""``co plugin new NAME``: write a complete, tested ``co-NAME`` plugin package.

The files come from ``co_core/cli/scaffold_files/*.tmpl`` (``$name``-style placeholders), so
what authors get is readable in one place and the generated package passes its own tests
out of the box (tests/test_scaffold.py installs one and runs them).
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import PackageNotFoundError, version
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Annotated, Any

import typer

from co_core.kernel.errors import CoError
from co_core.kernel.hookspecs import HOOKSPEC_VERSION

NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
RESERVED = {"core", "co"}  # the core's own plugin and settings section

# template -> path in the package ("{ident}" is the module-safe name)
LAYOUT = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "README.md.tmpl": "README.md",
    "__init__.py.tmpl": "co_{ident}/__init__.py",
    "plugin.py.tmpl": "co_{ident}/plugin.py",
    "settings.py.tmpl": "co_{ident}/settings.py",
    "catalog.py.tmpl": "co_{ident}/catalog.py",
    "tools.py.tmpl": "co_{ident}/tools.py",
    "test_plugin.py.tmpl": "tests/test_{ident}.py",
}


def plugin_name(raw: str) -> str:
    """``weather`` or ``co-weather`` -> ``weather``; anything else is one clear error."""
    name = raw.strip().lower()
    name = name.removeprefix("co-").removeprefix("co_")
    if not NAME.fullmatch(name):
        raise CoError(
            f"bad plugin name {raw!r}: use lowercase letters, digits and dashes, "
            "starting with a letter (e.g. 'weather' or 'team-wiki')"
        )
    if name in RESERVED:
        raise CoError(f"bad plugin name {raw!r}: {name!r} is Co's own; pick another")
    return name


def _core_version() -> str:
    try:
        return ".".join(version("co-core").split(".")[:2])
    except PackageNotFoundError:
        return "0.1"


def render(name: str) -> dict[str, str]:
    """Every file of the package ``co-NAME``, relative path -> text."""
    ident = name.replace("-", "_")
    values = {
        "name": name,
        "ident": ident,
        "IDENT": ident.upper(),
        "Class": "".join(part.capitalize() for part in name.split("-")),
        "core_version": _core_version(),
        "hookspec_version": str(HOOKSPEC_VERSION),
    }
    folder = files("co_core.cli") / "scaffold_files"
    return {
        target.format(ident=ident): Template(
            (folder / template).read_text(encoding="utf-8")
        ).substitute(values)
        for template, target in LAYOUT.items()
    }


def create(raw_name: str, parent: Path) -> Path:
    """Write ``parent/co-NAME``; refuses to touch a folder that already exists."""
    name = plugin_name(raw_name)
    root = parent / f"co-{name}"
    if root.exists():
        raise CoError(f"{root} already exists: pick another name or folder (nothing was written)")
    if not parent.is_dir():
        raise CoError(f"{parent} is not a folder")
    for relative, text in render(name).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def register(app: Any) -> None:
    """``co plugin new NAME``."""
    plugin_app = typer.Typer(help="Write your own Co plugins.", no_args_is_help=True)

    @plugin_app.command("new")
    def new(
        name: Annotated[str, typer.Argument(help="The plugin's name: 'weather' makes co-weather.")],
        folder: Annotated[
            Path, typer.Option("--dir", help="Where to create the co-NAME folder.")
        ] = Path("."),
    ) -> None:
        """Create a complete co-NAME package: hooks, a sample tool, settings, tests, README."""
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
