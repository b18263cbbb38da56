"""The core's own hook implementations, registered like any plugin's."""

from __future__ import annotations

from typing import Any

from co_core.hookspecs import hookimpl


@hookimpl
def register_settings(register: Any) -> None:
    from co_core.local_settings import LocalSettings

    register("local", LocalSettings)


@hookimpl
def register_status_checks(register: Any) -> None:
    from co_core import core_checks

    register("settings", core_checks.settings_check)
    register("data directory", core_checks.data_dir_check)


@hookimpl
def register_commands(app: Any) -> None:
    from co_core.undo_commands import register_cli

    register_cli(app)


@hookimpl
def register_slash_commands(register: Any) -> None:
    from co_core import undo_commands

    register("undo", undo_commands.undo_slash, help="revert the last turn's file changes")
    register("changes", undo_commands.changes_slash, help="list this session's file changes")
