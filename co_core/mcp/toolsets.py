"""MCP servers as pydantic-ai toolsets, each tool under Co's policy as ``mcp:<server>:<tool>``.

Imported only when an agent is built (it imports pydantic-ai and the MCP client).
Each configured server becomes one :class:`ServerToolset`: its tools are named
``<server>_<tool>`` for the model, and a :class:`~co_core.kernel.tools.ToolSpec` for each is put
into the ``specs`` mapping(s) the caller passes (the policy engine's and/or the agent's), so the
same approval gate, audit and ``co policy explain`` cover them. A server that fails to
start, or dies, is reported in one line and its tools disappear; the run goes on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic_ai.exceptions import (
    ApprovalRequired,
    CallDeferred,
    ModelRetry,
    ToolFailed,
)
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool, WrapperToolset

from co_core.kernel.tools import Risk, ToolSpec
from co_core.mcp.settings import Declared, McpServer

PASS_THROUGH = (ModelRetry, ToolFailed, ApprovalRequired, CallDeferred)
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def permission_key(server: str, tool: str) -> str:
    """The policy key of an MCP tool: ``mcp:<server>:<tool>``."""
    return f"mcp:{server}:{tool}"


def model_tool_name(server: str, tool: str) -> str:
    """The name the model sees: ``<server>_<tool>``, limited to what model APIs accept."""
    return _UNSAFE.sub("_", f"{server}_{tool}")[:64]


def one_line(exc: BaseException) -> str:
    """A readable one-line reason from an exception (or the first leaf of a group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return text[:300]


def _remote(*_: Any, **__: Any) -> Any:
    """Stands in for an MCP tool's function: the call runs on the MCP server."""
    raise RuntimeError("MCP tools run on their server, through their toolset")


@dataclass
class ServerState:
    """What is known about one server during a session (shared by copies of the toolset)."""

    name: str
    status: str = "not started"  # "running", "failed", "stopped"
    error: str | None = None
    tools: dict[str, str] = field(default_factory=dict)  # model name -> MCP tool name
    entered: int = 0


@dataclass
class ServerToolset(WrapperToolset[Any]):
    """One MCP server's tools: prefixed, registered with the policy, failures isolated."""

    server: str = ""
    specs: MutableMapping[str, ToolSpec] | Sequence[MutableMapping[str, ToolSpec]] = field(
        default_factory=dict
    )
    trust_annotations: bool = False
    warn: Callable[[str], None] = lambda message: None
    startup_timeout: float = 10.0
    state: ServerState = field(default_factory=lambda: ServerState(""))
    log: Path | None = None  # a stdio server's stderr

    @property
    def id(self) -> str | None:
        return f"mcp:{self.server}"

    @property
    def label(self) -> str:
        return f"MCP server {self.server!r}"

    @property
    def tool_name_conflict_hint(self) -> str:
        return "Rename one of the MCP servers in mcp_servers."

    def _fail(self, what: str, exc: BaseException) -> None:
        if self.state.status == "failed":
            return
        self.state.status, self.state.error = "failed", one_line(exc)
        where = f" (server log: {self.log})" if self.log is not None else ""
        self.warn(
            f"MCP server {self.server!r} {what}: {self.state.error}; its tools are skipped{where}"
        )

    async def __aenter__(self) -> ServerToolset:
        if self.state.status == "failed":
            return self
        import anyio

        try:
            with anyio.fail_after(self.startup_timeout):
                await self.wrapped.__aenter__()
        except TimeoutError:
            self._fail("did not start", TimeoutError(f"no answer in {self.startup_timeout:g} s"))
            return self
        except Exception as exc:
            self._fail("did not start", exc)
            return self
        self.state.entered += 1
        self.state.status = "running"
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        if self.state.entered <= 0:
            return None
        self.state.entered -= 1
        try:
            await self.wrapped.__aexit__(*args)
        except Exception as exc:  # a server that died while we talked to it
            self._fail("stopped", exc)
        if self.state.entered == 0 and self.state.status == "running":
            self.state.status = "stopped"
        return None

    def _risk(self, annotations: dict[str, Any] | None) -> Risk | None:
        """Unknown side effects ask; a read-only hint counts only if the user trusts hints."""
        if self.trust_annotations and annotations and annotations.get("readOnlyHint") is True:
            return "read"
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        if self.state.status == "failed":
            return {}
        try:
            found = await self.wrapped.get_tools(ctx)
        except Exception as exc:
            self._fail("did not list its tools", exc)
            return {}
        tools: dict[str, ToolsetTool[Any]] = {}
        for name, tool in found.items():
            new_name = model_tool_name(self.server, name)
            metadata = dict(tool.tool_def.metadata or {})
            annotations = metadata.get("annotations") or None
            risk = self._risk(annotations)
            key = permission_key(self.server, name)
            metadata.update(plugin=f"mcp:{self.server}", risk=risk, permission=key)
            self.state.tools[new_name] = name
            spec = ToolSpec(new_name, _remote, f"mcp:{self.server}", risk, _escape(key))
            for registry in _registries(self.specs):
                registry[new_name] = spec
            tools[new_name] = replace(
                tool,
                toolset=self,
                tool_def=replace(tool.tool_def, name=new_name, metadata=metadata),
            )
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        original = self.state.tools.get(name, name)
        if self.state.status == "failed":
            raise ToolFailed(f"MCP server {self.server!r} is not available: {self.state.error}")
        ctx = replace(ctx, tool_name=original)
        tool = replace(tool, tool_def=replace(tool.tool_def, name=original))
        try:
            return await self.wrapped.call_tool(original, tool_args, ctx, tool)
        except PASS_THROUGH:
            if self._dead():
                self._fail("stopped", RuntimeError("the server process exited"))
                raise ToolFailed(
                    f"MCP server {self.server!r} stopped during the call; its tools are gone"
                ) from None
            raise
        except Exception as exc:
            self._fail("stopped", exc)
            raise ToolFailed(
                f"MCP server {self.server!r} is not available: {self.state.error}"
            ) from None

    def _dead(self) -> bool:
        """True when a stdio server's process has exited (its errors are not the tool's)."""
        transport = getattr(getattr(self.wrapped, "client", None), "transport", None)
        task = getattr(transport, "_connect_task", None)
        if task is not None and task.done():
            return True
        checker = getattr(transport, "_is_session_dead", None)
        try:
            return bool(checker()) if callable(checker) else False
        except Exception:
            return False


def _registries(specs: Any) -> tuple[MutableMapping[str, ToolSpec], ...]:
    return (specs,) if isinstance(specs, MutableMapping) else tuple(specs)


def _escape(key: str) -> str:
    """A literal permission key as a template (MCP tool names may hold braces)."""
    return key.replace("{", "{{").replace("}", "}}")


def server_log(name: str) -> Path:
    """Where a stdio server's stderr goes (kept out of the chat)."""
    from co_core.kernel import paths

    folder = paths.data_dir() / "mcp"
    paths.ensure_dir(folder)
    return folder / f"{name}.log"


def build_client(declared: Declared, *, workspace: Path, timeout: float) -> AbstractToolset[Any]:
    """pydantic-ai's MCPToolset for one configured server (not connected yet)."""
    from pydantic_ai.mcp import MCPToolset

    server: McpServer = declared.server
    if server.url:
        return MCPToolset(
            server.url, headers=dict(server.headers) or None, init_timeout=timeout, id=declared.name
        )
    from fastmcp.client.transports import StdioTransport

    base = declared.path.parent.parent if declared.source == "project" and declared.path else None
    cwd = Path(server.cwd).expanduser() if server.cwd else None
    if cwd is not None and not cwd.is_absolute():
        cwd = (base or workspace) / cwd
    transport = StdioTransport(
        server.command or "",
        list(server.args),
        env=dict(server.env) or None,
        cwd=str(cwd) if cwd else None,
        keep_alive=False,
        log_file=server_log(declared.name),
    )
    return MCPToolset(transport, init_timeout=timeout, id=declared.name)


def mcp_toolsets(
    settings: Any,
    *,
    specs: MutableMapping[str, ToolSpec] | Sequence[MutableMapping[str, ToolSpec]],
    workspace: Path | None = None,
    warn: Callable[[str], None] = lambda message: None,
) -> list[ServerToolset]:
    """One toolset per server that may start here; give them to ``Agent(toolsets=...)``.

    ``specs`` (one mapping or several) receives a ToolSpec per MCP tool when the tools are
    listed, so the caller's policy gate finds them by name (the policy engine's ``engine.specs``,
    the
    agent's own spec mapping). Servers of an untrusted project are named in ``warn`` and
    never started.
    """
    from co_core.mcp.settings import declared_servers

    workspace = workspace or Path.cwd()
    options = settings.sections.get("mcp")
    trust_hints = bool(options.trust_annotations) if options is not None else False
    timeout = float(options.startup_timeout) if options is not None else 10.0
    out = []
    for declared in declared_servers(settings, workspace):
        if declared.skipped:
            if declared.skipped != "disabled":
                warn(f"MCP server {declared.name!r} not started: {declared.skipped}")
            continue
        try:
            client = build_client(declared, workspace=workspace, timeout=timeout)
        except Exception as exc:
            warn(f"MCP server {declared.name!r} skipped: {one_line(exc)}")
            continue
        out.append(
            ServerToolset(
                client,
                server=declared.name,
                specs=specs,
                trust_annotations=trust_hints,
                warn=warn,
                startup_timeout=timeout + 5,
                state=ServerState(declared.name),
                log=None if declared.server.url else server_log(declared.name),
            )
        )
    return out
