"""The ``co`` command line. Imports here stay light: heavy modules load inside commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperArgument

from co_core.cli import config, models
from co_core.cli.output import console, fail
from co_core.kernel.app import App, load_app, running_app
from co_core.kernel.errors import CoError

HELP = """Co: a privacy-first AI assistant for the terminal.

Talk to it with `co chat`, script it with `co ask`. Everything it can do comes from
plugins (`co plugins`); nothing risky happens without your say-so.
"""

app = typer.Typer(help=HELP, no_args_is_help=True, add_completion=False, rich_markup_mode=None)
config.register(app)
models.register(app)


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
        help="provider:name (ollama:qwen3:4b, gemini:..., openai-compatible:..., local, "
        "local:NAME from `co models list`, auto)",
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
    ctx: typer.Context,
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
    from co_core.ui.repl import run_chat

    which = resume or ("latest" if continue_ else None)
    raise typer.Exit(
        run_chat(
            running_app(ctx),
            model=model,
            base_url=base_url,
            yolo=yolo,
            resume=which,
            trace_content=trace_content,
        )
    )


@app.command("ask")
def ask_command(
    ctx: typer.Context,
    prompt: Annotated[
        list[str] | None, typer.Argument(help="the question (also read from stdin)")
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print one JSON object: output, tool_calls, usage, model, session_id."
        ),
    ] = False,
    stream_json: Annotated[
        bool,
        typer.Option(
            "--stream-json",
            help="Print one JSON object a line as things happen: start, text, tool_call, "
            "decision, result, usage, error, end (docs/stream-json.schema.json).",
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
    download_model: Annotated[
        bool,
        typer.Option(
            "--download-model",
            help="If the local model is not here yet, download it (never done unasked).",
        ),
    ] = False,
) -> None:
    """Ask one question and print the answer.

    For scripts: exit 0 ok, 1 runtime error, 2 usage error, 3 answered but a tool call was
    denied (the line on stderr names the --approve flag that allows it).
    """
    from co_core.ui.ask import read_prompt, run_ask

    if as_json and stream_json:
        print("co: error: --json and --stream-json: choose one", file=sys.stderr)
        raise typer.Exit(2)
    text = read_prompt(prompt or [])
    raise typer.Exit(
        run_ask(
            running_app(ctx),
            text,
            as_json=as_json,
            stream_json=stream_json,
            model=model,
            base_url=base_url,
            yolo=yolo,
            approve=tuple(approve or ()),
            trace_content=trace_content,
            download_model=download_model,
        )
    )


# -- co plugins -------------------------------------------------------------------------


plugins_app = typer.Typer(
    help="List installed plugins; install or remove them where Co runs.",
    invoke_without_command=True,
)


@plugins_app.callback()
def plugins_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List installed plugins with their version, hooks, tools and status.

    `co plugins install NAME` installs a plugin into the environment Co runs from (a venv,
    pipx or uv tool), `co plugins uninstall NAME` removes it.
    """
    if ctx.invoked_subcommand is not None:
        return
    infos = running_app(ctx).host.listed()
    if as_json:
        print(json.dumps([info.as_dict() for info in infos], indent=2))
        return
    if not infos:
        print(
            "No plugins installed. Install some with: "
            "co plugins install co-shell co-obsidian co-google co-slack"
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


@plugins_app.command("install")
def plugins_install(
    packages: Annotated[
        list[str] | None,
        typer.Argument(help="Plugins to install: names on PyPI (co-todo), files or folders."),
    ] = None,
    editable: Annotated[
        list[str] | None,
        typer.Option("--editable", "-e", help="A plugin folder to install editable (repeatable)."),
    ] = None,
    upgrade: Annotated[bool, typer.Option("--upgrade", "-U", help="Upgrade if installed.")] = False,
) -> None:
    """Install plugins into the environment Co runs from (works under pipx and uv tool)."""
    from co_core.cli import install

    args = [*(["--upgrade"] if upgrade else []), *(packages or [])]
    for folder in editable or []:
        args += ["--editable", folder]
    if not packages and not editable:
        raise fail("name a plugin to install, e.g. co plugins install co-slack", 2)
    try:
        install.run("install", args)
    except CoError as exc:
        from rich.markup import escape

        raise fail(escape(str(exc))) from None
    print("Done: `co plugins` lists what is installed.")


@plugins_app.command("uninstall")
def plugins_uninstall(
    packages: Annotated[list[str], typer.Argument(help="Plugin distributions, e.g. co-todo.")],
) -> None:
    """Remove plugins from the environment Co runs from."""
    from co_core.cli import install

    core = [p for p in packages if p.strip().lower().replace("_", "-") == "co-core"]
    if core:
        raise fail("co plugins uninstall removes plugins, not co-core itself", 2)
    try:
        install.run("uninstall", list(packages))
    except CoError as exc:
        from rich.markup import escape

        raise fail(escape(str(exc))) from None


app.add_typer(plugins_app, name="plugins")


# -- co status ---------------------------------------------------------------------------


@app.command("status")
def status_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check that Co, its model and its plugins are ready to work."""
    from co_core.kernel.status import collect_status

    rows = collect_status(running_app(ctx))
    if as_json:
        print(json.dumps([row.as_dict() for row in rows], indent=2))
    else:
        from rich.table import Table
        from rich.text import Text

        colours = {"ok": "green", "warn": "yellow", "fail": "red", "off": "dim"}
        table = Table("check", "plugin", "state", "detail")
        for row in rows:
            colour = colours[row.state]
            # plain text: `pip install "co-core[local]"` is no markup
            table.add_row(row.name, row.plugin, Text(row.state, colour), Text(row.detail))
        console().print(table)
    if any(row.state == "fail" for row in rows):
        raise typer.Exit(1)


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
    from co_core.kernel import trust

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


def build(co: App) -> typer.Typer:
    """The ``co`` Typer app with every plugin's commands added."""
    co.host.call_each("register_commands", app=app)
    return app


class _PlainArgument(TyperArgument):
    """An argument written ``KEY`` (``[KEY]`` when optional) in usage lines, as click and
    most tools write it: Typer writes a required one ``{key}``, which reads as something
    to type, braces and all."""

    def make_metavar(self, ctx: Any, *, usage: bool = False) -> str:
        text = super().make_metavar(ctx, usage=usage)
        if usage and self.metavar is None:
            name = self.name or ""
            return text.replace(f"{{{name}}}", name.upper()).replace(
                f"[{name}]", f"[{name.upper()}]"
            )
        return text


def plain_usage(command: Any) -> Any:
    """Every argument of ``command`` (a Typer command or group) and of its subcommands
    written plainly in usage lines."""
    for param in command.params:
        if type(param) is TyperArgument:
            param.__class__ = _PlainArgument
    for sub in getattr(command, "commands", {}).values():
        plain_usage(sub)
    return command


def _error_line(exc: BaseException) -> None:
    from rich.markup import escape

    console(stderr=True).print(
        f"[red]co: error:[/red] {escape(str(exc))}", markup=True, highlight=False, soft_wrap=True
    )


def main() -> None:
    try:
        co = load_app()
        command = plain_usage(typer.main.get_command(build(co)))
        command.main(prog_name="co", standalone_mode=True, obj=co)
    except CoError as exc:
        _error_line(exc)
        sys.exit(2)
    except OSError as exc:  # a read-only home, a full disk: one line, as `co status` says it
        from co_core.kernel.paths import unwritable

        problem = unwritable(exc)
        if problem is None:
            raise
        _error_line(problem)
        sys.exit(1)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        sys.exit(130)
