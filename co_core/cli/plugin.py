"""The command line's hooks: the core's own ``co`` subcommands and the ``/undo`` slash commands."""

from __future__ import annotations

import typer

from co_core.kernel.hookspecs import SlashCommandRegister, hookimpl


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from co_core.cli import mcp, policy, scaffold, sessions, telemetry, undo

    policy.register(app)
    undo.register(app)
    mcp.register(app)
    sessions.register(app)
    scaffold.register(app)
    telemetry.register(app)


@hookimpl
def register_slash_commands(register: SlashCommandRegister) -> None:
    from co_core.cli import undo

    register("undo", undo.undo_slash, help="revert the last turn's file changes")
    register("changes", undo.changes_slash, help="list this session's file changes")
