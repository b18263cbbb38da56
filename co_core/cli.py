"""The ``co`` command line. Imports here stay light: heavy modules load inside commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from co_core.app import App, load_app

if TYPE_CHECKING:
    from rich.console import Console

HELP = """Co: a privacy-first AI assistant for the terminal.

Talk to it with `co chat`, script it with `co ask`. Everything it can do comes from
plugins (`co plugins`); nothing risky happens without your say-so.
"""

app = typer.Typer(help=HELP, no_args_is_help=True, add_completion=False, rich_markup_mode=None)
config_app = typer.Typer(
    help="Show and change settings (settings.json, env vars, defaults).", no_args_is_help=True
)
app.add_typer(config_app, name="config")

_state: dict[str, App] = {}


def current() -> App:
    if "app" not in _state:
        _state["app"] = load_app()
    return _state["app"]


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def fail(message: str, code: int = 1) -> typer.Exit:
    console(stderr=True).print(f"[red]co: error:[/red] {message}", markup=True, soft_wrap=True)
    return typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        print(f"co {version('co-core')}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Co: a privacy-first AI assistant for the terminal."""


# -- co chat / co ask ---------------------------------------------------------------------

ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="provider:name (ollama:qwen3:4b, gemini:..., openai-compatible:..., local)",
    ),
]
BaseUrlOption = Annotated[
    str | None, typer.Option("--base-url", help="server URL for openai-compatible: models")
]
TraceContentOption = Annotated[
    bool,
    typer.Option(
        "--trace-content",
        help="Record prompts, answers and tool output in traces (secrets stay masked).",
    ),
]
YoloOption = Annotated[
    bool, typer.Option("--yolo", help="Run every tool call without asking (dangerous).")
]


@app.command("chat")
def chat_command(
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    yolo: YoloOption = False,
    continue_: Annotated[
        bool, typer.Option("--continue", "-c", help="Continue this folder's last session.")
    ] = False,
    resume: Annotated[
        str | None, typer.Option("--resume", "-r", help="Continue a session by id (or prefix).")
    ] = None,
    trace_content: TraceContentOption = False,
) -> None:
    """Talk with Co in your terminal (Ctrl+D or exit to leave)."""
    from co_core.repl import run_chat

    which = resume or ("latest" if continue_ else None)
    raise typer.Exit(
        run_chat(
            current(),
            model=model,
            base_url=base_url,
            yolo=yolo,
            resume=which,
            trace_content=trace_content,
        )
    )


@app.command("ask")
def ask_command(
    prompt: Annotated[
        list[str] | None, typer.Argument(help="the question (also read from stdin)")
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print one JSON object: output, tool_calls, usage, model, session_id."
        ),
    ] = False,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    yolo: YoloOption = False,
    approve: Annotated[
        list[str] | None,
        typer.Option(
            "--approve",
            metavar="PATTERN",
            help="Allow calls whose permission key matches PATTERN (repeatable), "
            "e.g. --approve 'shell:exec:git *'.",
        ),
    ] = None,
    trace_content: TraceContentOption = False,
) -> None:
    """Ask one question and print the answer (for scripts: exit 0 ok, 1 runtime error, 2 usage error)."""
    from co_core.ask import read_prompt, run_ask

    text = read_prompt(prompt or [])
    raise typer.Exit(
        run_ask(
            current(),
            text,
            as_json=as_json,
            model=model,
            base_url=base_url,
            yolo=yolo,
            approve=tuple(approve or ()),
            trace_content=trace_content,
        )
    )


# -- co plugins -------------------------------------------------------------------------


@app.command("plugins")
def plugins_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List installed plugins with their version, hooks, tools and status."""
    infos = current().host.listed()
    if as_json:
        print(json.dumps([info.as_dict() for info in infos], indent=2))
        return
    if not infos:
        print(
            "No plugins installed. Install some with: pip install co-shell co-obsidian co-google co-slack"
        )
        return
    from rich.table import Table

    table = Table("name", "version", "hooks", "tools", "status")
    for info in infos:
        status = {"loaded": "[green]loaded[/green]", "disabled": "[dim]disabled[/dim]"}.get(
            info.status, "[red]failed[/red]"
        )
        hooks = ", ".join(h.removeprefix("register_") for h in info.hooks)
        table.add_row(
            info.name, info.version or "-", hooks, ", ".join(t.name for t in info.tools), status
        )
    out = console()
    out.print(table)
    for info in infos:
        if info.status == "failed":
            out.print(f"[red]{info.name}[/red]: {info.error}", soft_wrap=True)


# -- co status ---------------------------------------------------------------------------


@app.command("status")
def status_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check that Co, its model and its plugins are ready to work."""
    from co_core.status_report import collect_status

    rows = collect_status(current())
    if as_json:
        print(json.dumps([row.as_dict() for row in rows], indent=2))
    else:
        from rich.table import Table

        colours = {"ok": "green", "warn": "yellow", "fail": "red", "off": "dim"}
        table = Table("check", "plugin", "state", "detail")
        for row in rows:
            colour = colours[row.state]
            table.add_row(row.name, row.plugin, f"[{colour}]{row.state}[/{colour}]", row.detail)
        console().print(table)
    if any(row.state == "fail" for row in rows):
        raise typer.Exit(1)


# -- co config ---------------------------------------------------------------------------


@config_app.command("path")
def config_path() -> None:
    """Print where the settings file lives (and the project file, if one is in use)."""
    from co_core import paths

    print(paths.settings_file())
    settings = current().settings
    if settings.project_file:
        print(settings.project_file)


def _shown(value: Any, secret: bool) -> str:
    if value is None:
        return "-"
    if secret:
        return "********"
    if isinstance(value, (list, dict, bool)):
        return json.dumps(value)
    return str(value)


@config_app.command("show")
def config_show(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show every setting, its value (secrets masked) and where the value came from."""
    from co_core.settings import env_name

    settings = current().settings
    rows = settings.rows()
    if as_json:
        data = {
            key: {
                "value": None if value is None else _shown(value, secret) if secret else value,
                "source": source,
            }
            for key, value, source, secret in rows
        }
        print(json.dumps(data, indent=2, default=str))
        return
    from rich.table import Table

    table = Table("key", "value", "source", "env var")
    models = settings.all_sections()
    for key, value, source, secret in rows:
        section, _, field = key.rpartition(".")
        info = type(models[section or "core"]).model_fields[field]
        table.add_row(key, _shown(value, secret), source, env_name(section or "core", field, info))
    console().print(table)


@config_app.command("get")
def config_get(
    key: Annotated[str, typer.Argument(help="e.g. model or obsidian.vault_path")],
) -> None:
    """Print one setting's effective value (secrets masked)."""
    from co_core.settings import is_secret_key, split_key

    settings = current().settings
    section, field = split_key(key, settings.all_sections())
    value = settings.get(key)
    print(_shown(value, is_secret_key(type(settings.section(section)), field)))


@config_app.command("set")
def config_set(
    key: Annotated[str, typer.Argument(help="e.g. model or obsidian.vault_path")],
    value: Annotated[str, typer.Argument(help="the value; JSON for lists and numbers")],
) -> None:
    """Store a setting in the user's settings file (written with mode 0600)."""
    from co_core import paths
    from co_core.settings import set_value

    set_value(key, value, current().settings_models())
    print(f"{key} saved to {paths.settings_file()}")


@config_app.command("unset")
def config_unset(key: Annotated[str, typer.Argument(help="the setting to remove")]) -> None:
    """Remove a setting from the user's settings file (its default or env var applies again)."""
    from co_core import paths
    from co_core.settings import set_value

    set_value(key, None, current().settings_models())
    print(f"{key} removed from {paths.settings_file()}")


# -- co trust ----------------------------------------------------------------------------


@app.command("trust")
def trust_command(
    folder: Annotated[
        Path, typer.Argument(help="project folder (default: the current one)")
    ] = Path("."),
    revoke: Annotated[bool, typer.Option("--revoke", help="Stop trusting the folder.")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List trusted folders.")] = False,
) -> None:
    """Let a project's .co/ folder configure Co (settings, rules, MCP servers)."""
    from co_core import trust

    if list_:
        for path in trust.trusted_folders():
            print(path)
        return
    if not folder.is_dir():
        raise fail(f"{folder}: not a folder", 2)
    if revoke:
        removed = trust.untrust(folder)
        print(f"{folder.resolve()} {'is no longer trusted' if removed else 'was not trusted'}")
        return
    print(f"Trusted {trust.trust(folder)}: its .co/ settings and rules now apply.")


def build() -> typer.Typer:
    """The app with plugin commands added (plugins register onto the Typer app)."""
    current().host.call_each("register_commands", app=app)
    return app


def main() -> None:
    from co_core.errors import CoError

    try:
        command = typer.main.get_command(build())
        command.main(prog_name="co", standalone_mode=True)
    except CoError as exc:
        console(stderr=True).print(
            f"[red]co: error:[/red] {exc}", markup=True, highlight=False, soft_wrap=True
        )
        sys.exit(2)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        sys.exit(130)
