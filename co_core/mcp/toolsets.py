"""MCP servers' tools as pydantic-ai toolsets, each under Co's policy as ``mcp:<server>:<tool>``.

Imported only when a session's servers start (it imports pydantic-ai and the MCP client).
Each server (:mod:`co_core.mcp.servers`) gets one :class:`ServerToolset`: its tools are
named ``<server>_<tool>`` for the model, and a :class:`~co_core.kernel.tools.ToolSpec` for
each is put into the ``specs`` mapping(s) the caller passes (the policy engine's), so the
same call pipeline, approval, audit and ``co policy explain`` cover them.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from co_core.kernel.tools import Risk, ToolSpec
from co_core.mcp.settings import Declared, Limits, McpServer
from co_core.telemetry import spans

if TYPE_CHECKING:
    from co_core.mcp.servers import Server

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
class ServerToolset(AbstractToolset[Any]):
    """One MCP server's tools as a turn sees them: prefixed, registered with the policy.

    The server's life belongs to :class:`~co_core.mcp.servers.McpServers`: entering this
    toolset (pydantic-ai does, every run) connects nothing; listing waits for the server
    to have started (a ``co.mcp.wait`` span when a turn has to wait), and a call is sent
    to the server's event loop.
    """

    server: Server
    specs: MutableMapping[str, ToolSpec] | Sequence[MutableMapping[str, ToolSpec]] = field(
        default_factory=dict
    )
    _listed: dict[str, Any] | None = field(default=None, repr=False)  # the listing ours are of
    _tools: dict[str, ToolsetTool[Any]] = field(default_factory=dict, repr=False)
    _names: dict[str, str] = field(default_factory=dict, repr=False)  # ours -> the server's

    @property
    def id(self) -> str | None:
        return f"mcp:{self.server.name}"

    @property
    def label(self) -> str:
        return f"MCP server {self.server.name!r}"

    @property
    def tool_name_conflict_hint(self) -> str:
        return "Rename one of the MCP servers in mcp_servers."

    async def __aenter__(self) -> ServerToolset:
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        return None

    def _risk(self, annotations: dict[str, Any] | None) -> Risk | None:
        """Unknown side effects ask; a read-only hint counts only if the user trusts hints."""
        hint = annotations.get("readOnlyHint") if annotations else None
        return "read" if self.server.trust_annotations and hint is True else None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        server = self.server
        if not server.ready.done():
            with spans.span("co.mcp.wait", server=server.name):
                await asyncio.wrap_future(server.ready)
        if server.failed or server.status != "running":
            self._forget()  # its tools are gone: the policy no longer knows them either
            return {}
        if server.tools is not self._listed:
            self._translate(server.tools)
        return self._tools

    def _translate(self, listed: dict[str, Any]) -> None:
        """The server's tools under Co's names, each known to the policy."""
        tools: dict[str, ToolsetTool[Any]] = {}
        names: dict[str, str] = {}
        for name, tool in listed.items():
            new_name = model_tool_name(self.server.name, name)
            metadata = dict(tool.tool_def.metadata or {})
            risk = self._risk(metadata.get("annotations") or None)
            key = permission_key(self.server.name, name)
            metadata.update(plugin=f"mcp:{self.server.name}", risk=risk, permission=key)
            spec = ToolSpec(new_name, _remote, f"mcp:{self.server.name}", risk, _escape(key))
            for registry in _registries(self.specs):
                registry[new_name] = spec
            names[new_name] = name
            tools[new_name] = replace(
                tool,
                toolset=self,
                tool_def=replace(tool.tool_def, name=new_name, metadata=metadata),
            )
        self._tools, self._names, self._listed = tools, names, listed

    def _forget(self) -> None:
        for registry in _registries(self.specs):
            for name in self._names:
                registry.pop(name, None)
        self._tools, self._names, self._listed = {}, {}, None

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        return await self.server.call(self._names.get(name, name), tool_args)


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


def wire_attributes(server: McpServer) -> dict[str, Any]:
    """How Co reaches an MCP server, as the MCP conventions name it on a client span: a
    pipe to a process it started, or HTTP to a host and port."""
    if not server.url:
        return {"network.transport": "pipe"}
    from urllib.parse import urlsplit

    url = urlsplit(server.url)
    attrs: dict[str, Any] = {"network.transport": "tcp", "network.protocol.name": "http"}
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError:  # a port that is not a number: the connection will say so
        return attrs
    if url.hostname:
        attrs.update({"server.address": url.hostname, "server.port": port})
    return attrs


def build_client(
    declared: Declared,
    *,
    workspace: Path,
    limits: Limits,
    on_message: Callable[[Any], Awaitable[None]] | None = None,
) -> Any:
    """pydantic-ai's MCPToolset for one configured server (not connected yet).

    Each request waits at most ``limits.call`` seconds for its answer (the MCP session
    then tells the server to stop and gives up); the connection and ``initialize`` a
    little longer than ``limits.startup``, which Co enforces itself (to say it timed out).
    """
    from co_core.kernel import extras

    extras.require("mcp")
    from pydantic_ai.mcp import MCPToolset

    server: McpServer = declared.server
    backstop: dict[str, Any] = {
        "init_timeout": limits.startup + 5,
        "read_timeout": limits.call,
        "message_handler": on_message,
        "id": declared.name,
    }
    if server.url:
        return MCPToolset(server.url, headers=dict(server.headers) or None, **backstop)
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
    return MCPToolset(transport, **backstop)
