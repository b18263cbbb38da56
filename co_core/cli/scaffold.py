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
# the core's own plugin name and settings sections (a plugin's section is named after it)
RESERVED = {"core", "co", "local", "mcp", "policy", "sessions", "telemetry"}
BUNDLED = {"shell", "obsidian", "google", "slack"}  # co-shell, ...: Co's own plugins

# template -> path in the package ("{ident}" is the module-safe name)
LAYOUT = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "README.md.tmpl": "README.md",
    "__init__.py.tmpl": "co_{ident}/__init__.py",
    "plugin.py.tmpl": "co_{ident}/plugin.py",
    "settings.py.tmpl": "co_{ident}/settings.py",
    "keys.py.tmpl": "co_{ident}/keys.py",
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


def taken(name: str) -> str | None:
    """Why ``name`` would make a second plugin of that name (a bundled or installed one), or None.

    Two plugins with one name shadow each other's entry point, settings section and keys.
    """
    from importlib.metadata import distributions, entry_points

    if name in BUNDLED:
        return f"co-{name} is one of Co's bundled plugins (pip install co-{name})"
    for point in entry_points(group="co"):
        if point.name == name:
            dist = point.dist
            where = f"{dist.name} {dist.version}" if dist is not None else point.value
            return f"an installed plugin is already called {name!r} ({where})"
    for dist in distributions():
        if (dist.metadata["Name"] or "").lower().replace("_", "-") == f"co-{name}":
            return f"co-{name} {dist.version} is already installed"
    return None


def _core_version() -> str:
    try:
        return ".".join(version("co-core").split(".")[:2])
    except PackageNotFoundError:
        return "0.1"


GUIDE_URL = "https://github.com/co-cli/co/blob/main/docs/plugins.md"


def guide_url() -> str:
    """Where the plugin guide is published: co-core's "Plugin guide" project URL."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        urls = metadata("co-core").get_all("Project-URL") or []
    except PackageNotFoundError:
        return GUIDE_URL
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "plugin guide":
            return url.strip()
    return GUIDE_URL


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
        "guide_url": guide_url(),
    }
    folder = files("co_core.cli") / "scaffold_files"
    return {
        target.format(ident=ident): Template(
            (folder / template).read_text(encoding="utf-8")
        ).substitute(values)
        for template, target in LAYOUT.items()
    }


def create(raw_name: str, parent: Path) -> Path:
    """Write ``parent/co-NAME``; refuses a folder that exists and a name that is taken."""
    name = plugin_name(raw_name)
    clash = taken(name)
    if clash:
        raise CoError(f"plugin name {name!r} is taken: {clash}; pick another (nothing was written)")
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
    plugin_app = typer.Typer(
        help="Write your own Co plugins: new, guide, example.", no_args_is_help=True
    )

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
        print(f"Start with co_{ident}/plugin.py; the author guide is `co plugin guide`")
        print(f"(also at {guide_url()}), and `co plugin example` writes its example, co-todo.")

    @plugin_app.command("guide")
    def guide() -> None:
        """Show the plugin author guide: a tutorial, every hook, testing, publishing."""
        from co_core.cli.guide import guide_text

        try:
            text = guide_text(guide_url())
        except CoError as exc:
            print(f"co: error: {exc}", file=sys.stderr)
            raise typer.Exit(1) from None
        if not sys.stdout.isatty():
            sys.stdout.write(text)
            return
        from rich.console import Console
        from rich.markdown import Markdown

        console = Console()
        with console.pager(styles=True):
            console.print(Markdown(text))

    @plugin_app.command("example")
    def example(
        folder: Annotated[
            Path, typer.Option("--dir", help="Where to create the co-todo folder.")
        ] = Path("."),
    ) -> None:
        """Write co-todo, the guide's complete example plugin (with its tests), to ./co-todo."""
        from co_core.cli.guide import write_example

        try:
            root = write_example(folder)
        except CoError as exc:
            print(f"co: error: {exc}", file=sys.stderr)
            raise typer.Exit(1) from None
        print(f"Created {root}, the plugin the guide builds (co plugin guide). Try it:")
        print(f"  cd {root}")
        print("  python -m venv .venv && . .venv/bin/activate")
        print("  pip install -e '.[test]' && pytest")

    app.add_typer(plugin_app, name="plugin")
