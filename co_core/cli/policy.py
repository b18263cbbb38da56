"""``co policy`` (effective rules, ``explain KEY``, grants) and ``co audit`` (the audit trail).

Registered through the core's own ``register_commands`` hook; typer and rich are imported
here, never by the engine.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from co_core.cli.output import fail
from co_core.kernel.app import running_app
from co_core.ui.render import visible

POLICY_HELP = "Show the permission rules, and why a permission key is allowed, asked or denied."


def _engine(
    ctx: typer.Context, approve: list[str] | None = None, yolo: bool = False, headless: bool = False
) -> Any:
    from co_core.policy.engine import PolicyEngine

    return PolicyEngine.from_app(
        running_app(ctx), approve=tuple(approve or ()), yolo=yolo, headless=headless, audit=False
    )


def _resolved_call(ctx: typer.Context, engine: Any, tool: str, raw: str) -> Any:
    """The call as Co would decide it: arguments parsed, resolved against the workspace."""
    from co_core.kernel.tools import CallRefused

    if tool not in engine.specs:
        known = ", ".join(sorted(engine.specs)) or "none"
        raise fail(f"no tool named {tool!r} (tools: {known})", 2)
    try:
        arguments = json.loads(raw)
    except ValueError as exc:
        raise fail(f"--args is not JSON: {exc}", 2) from None
    if not isinstance(arguments, dict):
        raise fail("--args must be a JSON object of arguments", 2)
    deps = running_app(ctx).make_deps()
    try:
        return engine.make_call(tool, arguments, deps)
    except CallRefused as exc:
        raise fail(f"Co would refuse this call: {exc}") from None
    finally:
        deps.close()


def _print_table(columns: list[str], rows: list[list[Any]]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(*columns)
    for row in rows:
        table.add_row(*(escape("-" if v is None else visible(v)) for v in row))
    Console(highlight=False).print(table)


def register(app: typer.Typer) -> None:
    policy_app = typer.Typer(help=POLICY_HELP, rich_markup_mode=None)

    @policy_app.callback(invoke_without_command=True)
    def show(
        ctx: typer.Context,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """List the effective rules, weakest level first, with where each came from."""
        if ctx.invoked_subcommand:
            return
        from co_core.policy.rules import LEVEL_HELP

        engine = _engine(ctx)
        for notice in engine.notices:
            typer.echo(f"co: {notice}", err=True)
        levels = engine.rules()
        plugins = engine.opinion_plugins()
        if as_json:
            data = {
                level: [
                    {"match": r.match, "effect": r.effect, "origin": r.origin, "reason": r.reason}
                    for r in rules
                ]
                for level, rules in levels.items()
            }
            data["plugin"] = [{"plugin": p} for p in plugins]
            print(json.dumps(data, indent=2))
            return
        rows = []
        for level, rules in levels.items():
            if level == "plugin":
                rows += [[level, "(per call)", "opinion", p] for p in plugins]
            rows += [[level, r.match, r.effect, r.origin] for r in rules]
        _print_table(["level", "match", "effect", "from"], rows)
        print("Stronger levels are lower in the table; the strongest level with a matching")
        print("rule decides (docs/policy.md). Levels:")
        for level, text in LEVEL_HELP.items():
            print(f"  {level:8} {text}")

    @policy_app.command("explain")
    def explain(
        ctx: typer.Context,
        key: Annotated[
            str | None, typer.Argument(help="a permission key, e.g. 'shell:exec:git push'")
        ] = None,
        tool: Annotated[
            str | None, typer.Option("--tool", help="A tool call to explain instead of a key.")
        ] = None,
        args: Annotated[
            str, typer.Option("--args", help="The call's arguments as JSON, with --tool.")
        ] = "{}",
        approve: Annotated[
            list[str] | None, typer.Option("--approve", help="Pretend this --approve was given.")
        ] = None,
        yolo: Annotated[bool, typer.Option("--yolo", help="Pretend --yolo was given.")] = False,
        headless: Annotated[
            bool, typer.Option("--headless", help="Decide as `co ask` would (no terminal).")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """Show which rule decides KEY (or a call: --tool NAME --args JSON) and why.

        A call is resolved the way Co resolves it before deciding, so the key shown is the
        one rules will match: `--tool read_file --args '{"path": "./src/../a.md"}'` shows
        `fs:read:a.md`. Shell commands show each part.
        """
        engine = _engine(ctx, approve, yolo, headless)
        if (key is None) == (tool is None):
            raise fail("give a permission KEY or --tool NAME --args JSON (not both)", 2)
        if tool is not None:
            call = _resolved_call(ctx, engine, tool, args)
        else:
            call = engine.call_for_key(key or "")
        decision, rows = engine.explain(call)
        if as_json:
            data = decision.as_dict()
            data["tool"], data["plugin"] = decision.tool, decision.plugin
            data["matching"] = {
                part: [{"level": r.level, "match": r.match, "effect": r.effect} for r in rules]
                for part, rules in rows
            }
            print(json.dumps(data, indent=2))
            return
        print(visible(f"{decision.key}: {decision.effect.upper()} (source: {decision.source})"))
        print(visible(f"  tool: {decision.tool} (plugin {decision.plugin})"))
        print(visible(f"  why: {decision.reason}"))
        for part, rules in rows:
            chosen = next((p for p in decision.parts if p.key == part), None)
            if len(rows) > 1 or part != decision.key:
                verdict = f"{chosen.effect} by {chosen.level}" if chosen else "?"
                print(visible(f"  part {part!r}: {verdict}"))
            for rule in reversed(rules):
                mark = "->" if chosen is not None and rule == chosen.rule else "  "
                print(
                    visible(
                        f"    {mark} {rule.level:8} {rule.match!r} {rule.effect} ({rule.origin})"
                    )
                )
            if chosen is not None and chosen.rule not in rules:  # e.g. asked: the rule does not
                print(visible(f"    -> {chosen.effect}: {chosen.rule.reason}"))  # name -delete

    @policy_app.command("preset")
    def preset(
        ctx: typer.Context,
        name: Annotated[
            str | None, typer.Argument(help="the preset to turn on, e.g. read-only")
        ] = None,
        off: Annotated[bool, typer.Option("--off", help="Turn the preset off instead.")] = False,
    ) -> None:
        """List the presets, or turn one on (or --off) in your settings.json.

        `co policy preset read-only` runs shell commands that only read (ls, cat, rg,
        find, git status, ...) without asking, in the exact forms its table lists (each
        option spelled out; docs/policy.md), and runs them read-only. Anything else asks,
        saying why. Your own rules override a preset. The same as
        `co config set policy.presets '["read-only"]'`.
        """
        from co_core.kernel import paths
        from co_core.kernel.settings import set_value
        from co_core.policy.presets import PRESETS
        from co_core.policy.settings import PolicySettings

        app = running_app(ctx)
        section = app.settings.find(PolicySettings)
        active = list(section.presets) if section is not None else []
        if name is None:
            _print_table(
                ["preset", "state", "rows", "what it allows"],
                [
                    [p.name, "on" if p.name in active else "off", len(p.rows), p.help]
                    for p in PRESETS.values()
                ],
            )
            print("Turn one on with `co policy preset NAME` (off: --off); its table of")
            print("forms is in docs/policy.md (`co policy explain` names the row it used).")
            return
        if name not in PRESETS:
            raise fail(f"no preset named {name!r} (presets: {', '.join(PRESETS)})", 2)
        wanted = [p for p in active if p != name] + ([] if off else [name])
        set_value("policy.presets", json.dumps(wanted), app.settings_models())
        if off:
            print(f"The {name} preset is off (policy.presets in {paths.settings_file()}).")
            return
        print(f"The {name} preset is on (policy.presets in {paths.settings_file()}).")
        print("It runs these commands without asking, only in the forms its table lists,")
        print("and runs them read-only (docs/policy.md lists every option):")
        for row in PRESETS[name].rows:
            print(f"  {row.name:24} {row.what}")

    @policy_app.command("grants")
    def grants(
        ctx: typer.Context,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    ) -> None:
        """List the approvals kept for this project ('always for this project').

        Each is the exact permission key that was approved: it covers that key only.
        """
        from co_core.policy.globs import literal

        engine = _engine(ctx)
        rules = engine.rules()["grant"]
        rows = [(literal(r.match) or r.match, r) for r in rules]
        if as_json:
            print(
                json.dumps(
                    [
                        {"key": key, "match": r.match, "effect": r.effect, "tool": r.tool}
                        for key, r in rows
                    ]
                )
            )
            return
        if not rules:
            print(f"No saved approvals for {engine.grant_scope}.")
            return
        _print_table(
            ["key", "effect", "tool", "from"],
            [[key, r.effect, r.tool, r.origin] for key, r in rows],
        )

    @policy_app.command("revoke")
    def revoke(
        key: Annotated[
            str, typer.Argument(help="the key to forget, as `co policy grants` lists it")
        ],
    ) -> None:
        """Forget a saved approval (in every project)."""
        from co_core.policy.grants import remove_grants

        removed = remove_grants(key=key)
        print(f"Removed {removed} saved approval(s) for {key!r}.")

    app.add_typer(policy_app, name="policy")

    # the audit lines of the user's files: (outcome, detail) for the table
    SAID: dict[str, Any] = {
        "hook": lambda e: (
            e.get("decision") or ("failed" if e.get("failed") else "ran"),
            f"{e.get('hook')} ({e.get('hook_event')})"
            + (f": {e['reason']}" if e.get("reason") else ""),
        ),
        "instructions": lambda e: ("read", ", ".join([*e.get("files", []), *e.get("memory", [])])),
        "command": lambda e: (f"/{e.get('command')}", e.get("source")),
        "memory": lambda e: (e.get("action"), e.get("line") or e.get("path")),
        "init": lambda e: ("written" if e.get("written") else "not written", e.get("path")),
    }

    @app.command("audit")
    def audit(
        tool: Annotated[str | None, typer.Option("--tool", help="Only this tool.")] = None,
        decision: Annotated[
            str | None,
            typer.Option("--decision", help="Only this effect: allow, deny, ask, ask_once."),
        ] = None,
        session: Annotated[str | None, typer.Option("--session", help="Only this session.")] = None,
        limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Entries shown.")] = 20,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    ) -> None:
        """Show recent audit entries: decisions, answers and tool executions."""
        from co_core.policy.audit import read_entries
        from co_core.policy.rules import EFFECTS

        if decision is not None and decision not in EFFECTS:
            from co_core.kernel.errors import CoError

            raise CoError(f"--decision must be one of {', '.join(EFFECTS)}, not {decision!r}")
        entries = [
            e
            for e in read_entries(session)
            if (tool is None or e.get("tool") == tool)
            and (decision is None or e.get("effect") == decision)
        ]
        entries.sort(key=lambda e: str(e.get("time", "")))
        entries = entries[-limit:]
        if as_json:
            for entry in entries:
                print(json.dumps(entry))
            return
        if not entries:
            print("No audit entries match.")
            return
        rows = []
        for e in entries:
            outcome = e.get("effect") or e.get("status")
            detail = e.get("source") if e.get("event") != "execution" else e.get("error")
            if e.get("event") == "execution":
                detail = f"{e.get('duration_ms')} ms" + (
                    f": {e['error']}" if e.get("error") else ""
                )
            elif e.get("event") in SAID:  # what the user's files did (docs/policy.md)
                outcome, detail = SAID[str(e.get("event"))](e)
            rows.append(
                [
                    str(e.get("time", ""))[:19].replace("T", " "),
                    e.get("session"),
                    e.get("event"),
                    e.get("tool"),
                    outcome,
                    detail,
                    e.get("permission"),
                ]
            )
        _print_table(["time", "session", "event", "tool", "outcome", "source/detail", "key"], rows)
