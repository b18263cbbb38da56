"""``co config path | show | get | set | unset``: the settings, where each value comes from."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from co_core.cli.output import console
from co_core.kernel.app import running_app

config_app = typer.Typer(
    help="Show and change settings (settings.json, env vars, defaults).", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")


@config_app.command("path")
def config_path(
    ctx: typer.Context,
) -> None:
    """Print where the settings file lives (and the project file, if one is in use)."""
    from co_core.kernel import paths

    print(paths.settings_file())
    settings = running_app(ctx).settings
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
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show every setting, its value (secrets masked) and where the value came from."""
    from co_core.kernel.settings import env_name

    settings = running_app(ctx).settings
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
    from rich.text import Text

    table = Table("key", "value", "source", "env var")
    models = settings.all_sections()
    for key, value, source, secret in rows:
        section, _, field = key.rpartition(".")
        info = type(models[section or "core"]).model_fields[field]
        shown = Text(_shown(value, secret))  # a value is no markup ("[a]" stays "[a]")
        table.add_row(key, shown, Text(source), env_name(section or "core", field, info))
    console().print(table)


@config_app.command("get")
def config_get(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="e.g. model or obsidian.vault_path")],
) -> None:
    """Print one setting's effective value (secrets masked)."""
    from co_core.kernel.settings import is_secret_key, split_key

    settings = running_app(ctx).settings
    section, field = split_key(key, settings.all_sections())
    value = settings.get(key)
    print(_shown(value, is_secret_key(type(settings.section(section)), field)))


# "-5" is a value here, not an option: it reaches the validation, which names the key
@config_app.command("set", context_settings={"ignore_unknown_options": True})
def config_set(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="e.g. model or obsidian.vault_path")],
    value: Annotated[str, typer.Argument(help="the value; JSON for lists and numbers")],
) -> None:
    """Store a setting in the user's settings file (written with mode 0600)."""
    from co_core.kernel import paths
    from co_core.kernel.settings import set_value

    set_value(key, value, running_app(ctx).settings_models())
    print(f"{key} saved to {paths.settings_file()}")


@config_app.command("unset")
def config_unset(
    ctx: typer.Context, key: Annotated[str, typer.Argument(help="the setting to remove")]
) -> None:
    """Remove a setting from the user's settings file (its default or env var applies again)."""
    from co_core.kernel import paths
    from co_core.kernel.settings import set_value

    set_value(key, None, running_app(ctx).settings_models())
    print(f"{key} removed from {paths.settings_file()}")
