"""``co mcp serve``: the installed plugins' tools, offered to other MCP clients over stdio.

Co's policy still rules, headless: an allowed call runs, a denied one fails with the
reason, and one that would ask is denied (nobody can be asked) unless a rule or
``--approve PATTERN`` allows it. Every decision and run goes to the audit trail.
Tools run through a pydantic-ai FunctionToolset with a real ``CoDeps``, exactly as in chat.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, is_dataclass, replace
from pathlib import Path
from typing import Any

from co_core.agent.calls.pipeline import CallPipeline
from co_core.agent.frontend import NoTerminal
from co_core.kernel.app import App


@dataclass
class Exposed:
    """The plugin tools being served, with what is needed to run them."""

    toolset: Any
    tools: dict[str, Any]  # name -> pydantic-ai ToolsetTool
    ctx: Any  # RunContext[CoDeps]


def _context(deps: Any) -> Any:
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    # No model runs here; RunContext needs one to exist, so a placeholder is given.
    return RunContext(deps=deps, model=TestModel(), usage=RunUsage())


async def expose(app: App, deps: Any, warn: Any) -> Exposed:
    """Load every plugin tool (one that fails to import is named and skipped). Co's own
    ``remember`` (plugin ``core``) is a chat session's, for the memory Co's sessions read:
    not another client's to write."""
    from pydantic_ai import Tool
    from pydantic_ai.toolsets import FunctionToolset

    tools = []
    for spec in app.host.tools():
        if spec.plugin == "core":
            continue
        try:
            tools.append(Tool(spec.load(), name=spec.name, max_retries=spec.retries))
        except Exception as exc:
            warn(
                f"tool {spec.name!r} of plugin {spec.plugin!r} skipped: {type(exc).__name__}: {exc}"
            )
    toolset = FunctionToolset(tools)
    ctx = _context(deps)
    return Exposed(toolset, await toolset.get_tools(ctx), ctx)


def _text(value: Any) -> tuple[str, dict[str, Any] | None]:
    """A tool's return value as MCP text (and structured content when it is an object)."""
    from co_core.kernel.results import ToolResult

    if isinstance(value, str):
        return value, None
    if isinstance(value, ToolResult):
        return value.display, {k: v for k, v in asdict(value).items() if v not in (None, {})}
    if is_dataclass(value) and not isinstance(value, type):
        value = asdict(value)
    import pydantic_core

    data = pydantic_core.to_jsonable_python(value, fallback=str)
    return json.dumps(data, ensure_ascii=False), data if isinstance(data, dict) else None


async def call(
    exposed: Exposed, pipeline: CallPipeline, name: str, arguments: dict[str, Any]
) -> tuple[bool, str, dict[str, Any] | None]:
    """Drive one call through the call pipeline, as the agent does: (ok, text, structured).
    Never raises for a tool's failure: it comes back as the text of an error result."""
    from pydantic import ValidationError

    from co_core.agent.calls.outcome import outcome

    tool = exposed.tools.get(name)
    if tool is None:
        return False, f"unknown tool {name!r}", None
    record = pipeline.open(f"mcp-{uuid.uuid4().hex[:12]}", name, arguments)
    deps = exposed.ctx.deps
    try:
        args = tool.args_validator.validate_python(arguments)
    except ValidationError as invalid:
        pipeline.end(record, *(outcome(invalid) or ("retry", str(invalid))))
        return False, str(record.result), None
    try:
        resolved = pipeline.resolve(record, args, deps)
    except Exception as exc:  # a plugin's resolver failed: one line, never a traceback
        pipeline.end(record, "error", f"{name}: {type(exc).__name__}: {exc}")
        return False, str(record.result), None
    if not resolved:
        return False, str(record.result), None
    if not (await pipeline.decide(record)).allowed:  # headless: nobody to ask, so it is denied
        await pipeline.settle([record])
        return False, str(record.result), None

    async def run(canonical: dict[str, Any]) -> Any:
        ctx = replace(exposed.ctx, tool_name=name, tool_call_id=record.call_id)
        return await exposed.toolset.call_tool(name, canonical, ctx, tool)

    try:
        value = await pipeline.execute(record, run)
    except Exception:
        return False, str(record.result), None
    text, structured = _text(value)
    return True, text, structured


def build_server(app: App, exposed: Exposed, calls: CallPipeline) -> Any:
    """The MCP SDK's low-level server answering tools/list and tools/call."""
    import mcp.types as types
    from mcp.server.lowlevel import Server

    specs = {spec.name: spec for spec in app.host.tools()}

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        listed = []
        for name, tool in exposed.tools.items():
            spec = specs.get(name)
            risk = spec.risk if spec else None
            listed.append(
                types.Tool(
                    name=name,
                    description=tool.tool_def.description or "",
                    input_schema=tool.tool_def.parameters_json_schema,
                    annotations=types.ToolAnnotations(
                        read_only_hint=risk == "read",
                        destructive_hint=risk in ("write", "exec", None),
                        open_world_hint=risk == "send",
                    ),
                )
            )
        return types.ListToolsResult(tools=listed)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        ok, text, structured = await call(exposed, calls, params.name, dict(params.arguments or {}))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=structured,
            is_error=not ok,
        )

    from importlib.metadata import version

    return Server(
        "co", version=version("co-core"), on_list_tools=list_tools, on_call_tool=call_tool
    )


async def _serve(app: App, calls: CallPipeline, deps: Any, warn: Any) -> None:
    from mcp.server.stdio import stdio_server

    exposed = await expose(app, deps, warn)
    server = build_server(app, exposed, calls)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_stdio(
    app: App, *, approve: Sequence[str] = (), workspace: Path | None = None, warn: Any = None
) -> None:
    """Serve until the client closes stdin; resources are closed on the way out."""
    import anyio

    from co_core.policy import PolicyEngine

    warn = warn or app.warn
    session = f"mcp-{uuid.uuid4().hex[:8]}"
    workspace = workspace or app.cwd
    engine = PolicyEngine.from_app(
        app, workspace=workspace, session_id=session, approve=tuple(approve), headless=True
    )
    for notice in engine.notices + engine.check_upgrades():
        warn(notice)
    deps = app.make_deps(workspace, session_id=session)
    deps.policy = engine.allows
    deps.policy_version = lambda: engine.version
    calls = CallPipeline(engine, NoTerminal())
    try:
        anyio.run(_serve, app, calls, deps, warn)
    finally:
        for problem in deps.close():
            warn(problem)
        if engine.audit is not None:
            engine.audit.close()
