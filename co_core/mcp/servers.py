"""The MCP servers of one session: started once, in the background, kept for every turn,
stopped when Co exits.

Starting a server costs a process start (a second or more for a Python server), so each
configured server starts once per session, as soon as the session is prepared (while the
user types), and stays up until Co exits. The servers live in a thread of their own with
its own event loop, as the local model lives in a process of its own: a turn reaches
them through thread-safe futures whichever event loop runs it, and stopping them does not
depend on a turn's loop still running.

Each server has two limits (docs/mcp.md): ``timeout`` to start and list its tools, and
``call_timeout`` for each call. A call that takes longer ends as ``timed out``; a server
that times out twice is taken out for the rest of the session. A server that fails to
start or dies is reported in one line and its tools disappear; everything else goes on.
Its start-up is a ``co.mcp.start`` span; each request to it is a client span as
OpenTelemetry's MCP conventions have them (``initialize``, ``tools/list``, ``tools/call
<tool>``), whose trace context the server receives in the request's ``_meta``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_core.mcp.settings import Limits, declared_servers, limits
from co_core.mcp.toolsets import (
    ServerToolset,
    build_client,
    one_line,
    server_log,
    wire_attributes,
)
from co_core.telemetry import spans

if TYPE_CHECKING:
    from co_core.agent.calls.outcome import CallTimedOut
    from co_core.kernel.settings import Settings
    from co_core.kernel.tools import ToolSpec

STOP_WAIT = 10.0  # seconds a server has to stop before Co stops waiting
TIMEOUTS_TO_FAIL = 2  # calls timed out after which a server is taken out for the session
TOOLS_CHANGED = "notifications/tools/list_changed"
REQUEST_TIMEOUT = -32001  # JSON-RPC error code of a request the client stopped waiting for


def _timed_out(error: BaseException) -> bool:
    """Whether the MCP session gave up waiting for the answer (JSON-RPC ``REQUEST_TIMEOUT``),
    however the MCP client wrapped that."""
    seen: BaseException | None = error
    while seen is not None:
        code = getattr(getattr(seen, "error", None), "code", getattr(seen, "code", None))
        if code == REQUEST_TIMEOUT or isinstance(seen, TimeoutError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def error_type(error: BaseException) -> str:
    """``error.type`` of a failed MCP request, as the MCP conventions name it: ``timeout``,
    a JSON-RPC error's code, ``tool_error`` for a tool's error result, else the error's type."""
    if _timed_out(error):
        return "timeout"
    seen: BaseException | None = error
    while seen is not None:
        code = getattr(getattr(seen, "error", None), "code", None)
        if isinstance(code, int):
            return str(code)
        if type(seen).__name__ == "ToolError":  # fastmcp's: the result had isError set
            return "tool_error"
        seen = seen.__cause__ or seen.__context__
    return type(error).__qualname__


def _placeholder_context() -> Any:
    """A run context for listing tools outside a run (only its retry count is read)."""
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    return RunContext(deps=None, model=TestModel(), usage=RunUsage())


@dataclass
class Server:
    """One MCP server's life, run as one task on the servers' event loop."""

    name: str
    client: Any  # pydantic-ai's MCPToolset (not connected until started)
    limits: Limits
    log: Path | None = None  # a stdio server's stderr
    warn: Callable[[str], None] = lambda message: None
    trust_annotations: bool = False  # let its readOnlyHint make a tool read-risk
    wire: dict[str, Any] = field(default_factory=dict)  # how it is reached (span attributes)
    status: str = "starting"  # "running", "failed", "stopped"
    error: str | None = None
    tools: dict[str, Any] = field(default_factory=dict)  # its own names -> ToolsetTool
    timeouts: int = 0
    ready: concurrent.futures.Future[None] = field(default_factory=concurrent.futures.Future)
    loop: asyncio.AbstractEventLoop | None = None
    _scope: Any = None  # the anyio cancel scope of its life: cancelled to stop it
    _closing: bool = False

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    # -- on the servers' loop ----------------------------------------------------------------

    async def run(self) -> None:
        """Start, list the tools, serve until stopped, stop (the process with it)."""
        import anyio

        self.loop = asyncio.get_running_loop()
        if self._closing:  # Co is exiting before this server began
            self.status = "stopped"
            self._set_ready()
            return
        with anyio.CancelScope() as self._scope:
            with spans.span("co.mcp.start", server=self.name) as traced:
                started = await self._start()
                traced.set(status=self.status, tools=len(self.tools))
                if not started:
                    traced.error(self.error or "did not start")
            self._set_ready()
            if not started:
                return
            try:
                await anyio.sleep_forever()
            finally:
                with anyio.move_on_after(STOP_WAIT, shield=True):
                    try:
                        await self.client.__aexit__(None, None, None)
                    except Exception as exc:  # it died meanwhile: nothing left to stop
                        self._fail("stopped", one_line(exc))
                if self.status == "running":
                    self.status = "stopped"
        self._set_ready()

    def _set_ready(self) -> None:
        if not self.ready.done():
            self.ready.set_result(None)

    async def _start(self) -> bool:
        import anyio

        deadline = anyio.CancelScope(deadline=anyio.current_time() + self.limits.startup)
        try:
            with deadline:
                with self._request("initialize"):
                    await self.client.__aenter__()
                try:
                    with self._request("tools/list") as listed:
                        self.tools = await self.client.get_tools(_placeholder_context())
                        listed.set(tools=len(self.tools))
                except BaseException:
                    with anyio.CancelScope(shield=True):
                        await self.client.__aexit__(None, None, None)
                    raise
        except anyio.get_cancelled_exc_class():
            raise  # Co is exiting
        except Exception as exc:  # (a library may turn the deadline into an error of its own)
            timed_out = f"timed out after {self.limits.startup:g} s"
            self._fail("did not start", timed_out if deadline.cancel_called else one_line(exc))
            return False
        if deadline.cancelled_caught:
            self._fail("did not start", f"timed out after {self.limits.startup:g} s")
            return False
        self.status = "running"
        return True

    async def on_message(self, message: Any) -> None:
        """The server's notifications: a changed tool list is listed again."""
        notification = getattr(message, "root", message)
        if getattr(notification, "method", None) == TOOLS_CHANGED and self.status == "running":
            asyncio.get_running_loop().create_task(self._relist())

    async def _relist(self) -> None:
        try:  # (not traced: a trace of its own would be listed among the turns)
            self.tools = await self.client.get_tools(_placeholder_context())
        except Exception as exc:
            self._fail("did not list its tools", one_line(exc))

    def _request(self, method: str, tool: str | None = None, **content: Any) -> Any:
        """The client span of one request to this server (a no-op when tracing is off)."""
        attrs: dict[str, Any] = {"mcp.method.name": method, **self.wire}
        if tool is not None:
            attrs["gen_ai.tool.name"] = tool
        client = getattr(self.client, "client", None)  # fastmcp's, once connected
        try:
            version = getattr(client, "protocol_version", None)
            session = client.transport.get_session_id() if client is not None else None
        except Exception:  # not connected yet
            version = session = None
        if version:
            attrs["mcp.protocol.version"] = version
        if session:
            attrs["mcp.session.id"] = session
        target = f"{method} {tool}" if tool else method
        return spans.client_span(target, server=self.name, content=content, **attrs)

    async def _call(self, name: str, args: dict[str, Any], trace: object = None) -> Any:
        """One call, limited to ``call_timeout`` by the MCP session itself (it tells the
        server to stop, and the session stays usable for the next call). ``trace`` is the
        call's span: fastmcp sends it to the server in ``_meta`` (its own spans left out,
        Co makes them)."""
        from fastmcp.telemetry import suppress_fastmcp_telemetry
        from pydantic_ai.exceptions import ModelRetry, ToolFailed

        try:
            with spans.attached(trace), suppress_fastmcp_telemetry():
                return await self.client.direct_call_tool(name, args)
        except (ModelRetry, ToolFailed) as error:
            if _timed_out(error):
                raise self._timed_out(name) from None
            if self._dead():
                self._fail("stopped", "the server process exited")
                raise ToolFailed(
                    f"MCP server {self.name!r} stopped during the call; its tools are gone"
                ) from None
            raise
        except Exception as exc:
            if _timed_out(exc):
                raise self._timed_out(name) from None
            self._fail("stopped", one_line(exc))
            raise ToolFailed(f"MCP server {self.name!r} is not available: {self.error}") from None

    def _timed_out(self, name: str) -> CallTimedOut:
        from co_core.agent.calls.outcome import CallTimedOut

        self.timeouts += 1
        if self.timeouts >= TIMEOUTS_TO_FAIL:
            self._fail("timed out twice", f"the last call was {name}")
            self.stop()
        return CallTimedOut(
            f"MCP server {self.name!r} did not answer {name} within {self.limits.call:g} s"
        )

    def _dead(self) -> bool:
        """True when a stdio server's process has exited (its errors are not the tool's)."""
        transport = getattr(getattr(self.client, "client", None), "transport", None)
        task = getattr(transport, "_connect_task", None)
        if task is not None and task.done():
            return True
        checker = getattr(transport, "_is_session_dead", None)
        try:
            return bool(checker()) if callable(checker) else False
        except Exception:
            return False

    def _fail(self, what: str, why: str) -> None:
        if self.failed or self._closing:
            return
        self.status, self.error = "failed", why
        where = f" (server log: {self.log})" if self.log is not None else ""
        self.warn(f"MCP server {self.name!r} {what}: {why}; its tools are skipped{where}")

    # -- from any thread -----------------------------------------------------------------

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        """Call a tool from whichever event loop runs the turn."""
        from pydantic_ai.exceptions import ToolFailed

        if self.failed or self.loop is None:
            raise ToolFailed(f"MCP server {self.name!r} is not available: {self.error}")
        request = self._request("tools/call", name, **{"gen_ai.tool.call.arguments": args})
        with request as traced:
            call = self._call(name, args, spans.current_context())
            future = asyncio.run_coroutine_threadsafe(call, self.loop)
            try:
                result = await asyncio.wrap_future(future)
            except BaseException as error:
                traced.set(**{"error.type": error_type(error)})
                raise
            traced.set_content(**{"gen_ai.tool.call.result": result})
            return result

    def stop(self) -> None:
        """End the server's life (its task stops the process)."""
        loop, scope = self.loop, self._scope
        if loop is not None and scope is not None and not loop.is_closed():
            loop.call_soon_threadsafe(scope.cancel)


@dataclass
class McpServers:
    """The session's MCP servers (a resource of the session: ``close`` runs when Co exits)."""

    settings: Settings
    workspace: Path
    servers: list[Server] = field(default_factory=list)
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _runs: list[concurrent.futures.Future[None]] = field(default_factory=list)
    _toolsets: list[ServerToolset] | None = None

    def toolsets(
        self, specs: MutableMapping[str, ToolSpec], warn: Callable[[str], None]
    ) -> list[ServerToolset]:
        """Start every server that may start here (at once, in the background) and give one
        toolset per server; each tool joins ``specs`` once its server lists it."""
        if self._toolsets is None:
            self._toolsets = [ServerToolset(s, specs) for s in self._start(warn)]
        return self._toolsets

    def _start(self, warn: Callable[[str], None]) -> list[Server]:
        options: Any = self.settings.sections.get("mcp")
        trust_hints = bool(options.trust_annotations) if options is not None else False
        for declared in declared_servers(self.settings, self.workspace):
            if declared.skipped:
                if declared.skipped != "disabled":
                    warn(f"MCP server {declared.name!r} not started: {declared.skipped}")
                continue
            limit = limits(declared.server, self.settings)
            server = Server(declared.name, None, limit, warn=warn)
            try:
                server.client = build_client(
                    declared, workspace=self.workspace, limits=limit, on_message=server.on_message
                )
            except Exception as exc:
                warn(f"MCP server {declared.name!r} skipped: {one_line(exc)}")
                continue
            server.log = None if declared.server.url else server_log(declared.name)
            server.wire = wire_attributes(declared.server)
            server.trust_annotations = trust_hints
            self.servers.append(server)
        if self.servers:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=self._loop.run_forever, name="co-mcp-servers", daemon=True
            )
            self._thread.start()
            self._runs = [
                asyncio.run_coroutine_threadsafe(server.run(), self._loop)
                for server in self.servers
            ]
        return self.servers

    def close(self) -> None:
        """Stop every server and the thread they live in; nothing is left running."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(self._stop_all)
        concurrent.futures.wait(self._runs, timeout=STOP_WAIT + 1)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=STOP_WAIT)
        if not thread.is_alive():
            loop.close()
        self._loop = self._thread = None

    def _stop_all(self) -> None:
        """On the servers' loop (so no server can begin after this): stop them all."""
        for server in self.servers:
            server._closing = True
            if server._scope is not None:
                server._scope.cancel()


def session_servers(settings: Settings, deps: Any) -> McpServers:
    """The resource factory (``register_deps``): the servers of this session's workspace."""
    return McpServers(settings, deps.workspace)
