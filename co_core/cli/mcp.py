"""``co mcp``: list, add and remove MCP servers, and ``co mcp serve`` (Co's tools over MCP).

Registered through the core's ``register_commands``; the MCP SDK is imported only inside
the commands that talk to a server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from co_core.kernel.app import running_app

MCP_HELP = "MCP servers as tool sources (list, add, remove), and Co's tools as an MCP server."


def _error(message: str) -> typer.Exit:
    from co_core.ui.render import visible

    typer.echo(f"co: error: {visible(message)}", err=True)
    return typer.Exit(1)


def _pairs(values: list[str] | None, sep: str, what: str) -> dict[str, str]:
    out = {}
    for value in values or []:
        key, found, rest = value.partition(sep)
        if not found or not key.strip():
            raise _error(f"{what} {value!r} must look like NAME{sep}VALUE")
        out[key.strip()] = rest.strip() if sep == ":" else rest
    return out


def register(app: typer.Typer) -> None:
    mcp_app = typer.Typer(help=MCP_HELP, rich_markup_mode=None, no_args_is_help=True)

    @mcp_app.command("list")
    def list_servers(
        ctx: typer.Context,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        no_start: Annotated[
            bool, typer.Option("--no-start", help="Do not start servers to list their tools.")
        ] = False,
    ) -> None:
        """List MCP servers: where each is declared, whether it starts, and its tools."""
        from co_core.mcp.probe import Probe, probe_all
        from co_core.mcp.settings import declared_servers
        from co_core.ui.render import visible

        app_ = running_app(ctx)
        settings = app_.settings
        declared = declared_servers(settings, app_.cwd)
        if no_start:
            probes = [
                Probe(d.name, False, f"not started: {d.skipped}" if d.skipped else "not probed")
                for d in declared
            ]
        else:
            probes = probe_all(declared, workspace=app_.cwd, settings=settings)
        if as_json:
            rows = [
                {
                    "name": d.name,
                    "source": d.source,
                    "file": str(d.path) if d.path else None,
                    "transport": "http" if d.server.url else "stdio",
                    "target": d.server.describe(),
                    "status": "ok" if p.ok else ("off" if d.skipped else "failed"),
                    "detail": p.detail,
                    "tools": p.tools,
                    "permission_keys": [f"mcp:{d.name}:{t}" for t in p.tools],
                }
                for d, p in zip(declared, probes, strict=True)
            ]
            print(json.dumps(rows, indent=2))
            return
        if not declared:
            print("No MCP servers configured. Add one with `co mcp add NAME -- COMMAND ARGS...`.")
            return
        for d, p in zip(declared, probes, strict=True):
            state = "ok" if p.ok else ("off" if d.skipped else "FAILED")
            print(visible(f"{d.name} [{d.source}] {d.server.describe()}"))
            print(visible(f"  status: {state}: {p.detail}"))
            if p.tools:
                hinted = set(p.read_only)
                names = ", ".join(t + (" (read-only hint)" if t in hinted else "") for t in p.tools)
                print(visible(f"  tools: {names}"))
                print(visible(f"  permission keys: mcp:{d.name}:<tool>"))

    @mcp_app.command("add")
    def add(
        name: Annotated[str, typer.Argument(help="a short name; tools become NAME_<tool>")],
        command: Annotated[
            list[str] | None, typer.Argument(help="after --: the program and its arguments")
        ] = None,
        url: Annotated[str | None, typer.Option("--url", help="streamable-HTTP URL")] = None,
        header: Annotated[
            list[str] | None, typer.Option("--header", help="'Name: value' (with --url)")
        ] = None,
        env: Annotated[
            list[str] | None, typer.Option("--env", help="NAME=VALUE for the program")
        ] = None,
        cwd: Annotated[str | None, typer.Option("--cwd", help="working folder")] = None,
        replace: Annotated[
            bool, typer.Option("--replace", help="Overwrite a server of that name.")
        ] = False,
    ) -> None:
        """Add an MCP server to your settings: `co mcp add NAME -- CMD ARGS` or `--url URL`."""
        from pydantic import ValidationError

        from co_core.kernel import paths
        from co_core.kernel.settings import read_json
        from co_core.mcp.settings import NAME, NAME_RULE, McpServer

        if not NAME.match(name):
            raise _error(f"server name {name!r}: use {NAME_RULE}")
        argv = list(command or [])
        if argv[:1] == ["--"]:
            argv = argv[1:]
        raw: dict[str, Any] = {}
        if argv:
            raw["command"], raw["args"] = argv[0], argv[1:]
        if url:
            raw["url"] = url
        if header:
            raw["headers"] = _pairs(header, ":", "--header")
        if env:
            raw["env"] = _pairs(env, "=", "--env")
        if cwd:
            raw["cwd"] = cwd
        try:
            server = McpServer.model_validate(raw)
        except ValidationError as exc:
            message = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise _error(f"mcp server {name!r}: {message}") from None
        path = paths.settings_file()
        data = read_json(path)
        servers = data.setdefault("mcp_servers", {})
        if not isinstance(servers, dict):
            raise _error(f"{path}: mcp_servers must be an object")
        if name in servers and not replace:
            raise _error(f"an MCP server named {name!r} exists (use --replace, or pick a name)")
        servers[name] = server.model_dump(exclude_defaults=True)
        paths.ensure_dir(path.parent)
        paths.write_private(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
        print(f"Added MCP server {name!r} ({server.describe()}) to {path}.")
        print(
            f"Its tools ask before each call; to allow them: a rule "
            f'{{"match": "mcp:{name}:*", "effect": "allow"}} in policy.rules.'
        )

    @mcp_app.command("remove")
    def remove(
        ctx: typer.Context, name: Annotated[str, typer.Argument(help="the server's name")]
    ) -> None:
        """Remove an MCP server from your settings."""
        from co_core.kernel import paths
        from co_core.kernel.settings import read_json

        path = paths.settings_file()
        data = read_json(path)
        servers = data.get("mcp_servers")
        if not isinstance(servers, dict) or name not in servers:
            from co_core.mcp.settings import declared_servers

            elsewhere = [
                d
                for d in declared_servers(running_app(ctx).settings, running_app(ctx).cwd)
                if d.name == name
            ]
            if elsewhere and elsewhere[0].path:
                raise _error(f"{name!r} is declared in {elsewhere[0].path}; edit that file")
            raise _error(f"no MCP server named {name!r} in {path}")
        del servers[name]
        if not servers:
            del data["mcp_servers"]
        paths.write_private(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
        print(f"Removed MCP server {name!r} from {path}.")

    @mcp_app.command("serve")
    def serve(
        ctx: typer.Context,
        approve: Annotated[
            list[str] | None,
            typer.Option(
                "--approve", help="Allow calls matching PATTERN (repeatable), e.g. 'fs:read:**'."
            ),
        ] = None,
        workspace: Annotated[
            Path | None, typer.Option("--workspace", help="Folder tools work in (default: here).")
        ] = None,
    ) -> None:
        """Serve the installed plugins' tools over MCP (stdio), under Co's policy.

        Allowed calls run, denied ones fail with the reason; calls that would ask are denied
        (nobody can be asked) unless a rule or --approve allows them. All are audited.
        """
        import sys

        from co_core.kernel import extras

        extras.require("mcp")
        from co_core.mcp.serve import serve_stdio

        if sys.stdin.isatty():
            typer.echo(
                "co mcp serve speaks MCP on stdin/stdout: start it from an MCP client "
                "(Ctrl+C stops it).",
                err=True,
            )
        try:
            serve_stdio(running_app(ctx), approve=approve or (), workspace=workspace)
        except KeyboardInterrupt:
            raise typer.Exit(130) from None

    app.add_typer(mcp_app, name="mcp")
