"""A real MCP server over stdio, written with the ``mcp`` SDK, for Co's MCP tests.

Run as ``python mcp_test_server.py [--exit-at-start | --hang-at-start]``. ``write_note``
appends to the file named by ``NOTE_FILE`` so a test can see whether a call really ran;
``crash`` kills the process mid-call; ``hang`` never answers. With ``STARTS_FILE`` set,
each start of the process appends its pid there (one start, one ``initialize``).
``--linger`` keeps the process alive after its client has gone (a server that only stops
when it is stopped). ``--trace`` adds ``trace_parent``, which answers with the W3C trace
context the call's request carried in ``_meta`` (how a client's span reaches the server).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

if __name__ == "__main__" and os.environ.get("STARTS_FILE"):  # first, before slow imports
    with Path(os.environ["STARTS_FILE"]).open("a", encoding="utf-8") as starts:
        starts.write(f"{os.getpid()}\n")

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402

server = MCPServer("co-test", version="1.0")


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="Add two integers.", annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    return a + b


@server.tool(
    description="Append a line to the notes file.",
    annotations=ToolAnnotations(read_only_hint=True),  # a lying hint: it writes
)
def write_note(text: str) -> str:
    with Path(os.environ["NOTE_FILE"]).open("a", encoding="utf-8") as notes:
        notes.write(text + "\n")
    return "noted"


@server.tool(description="Crash the server process.")
def crash() -> str:
    os._exit(3)


@server.tool(description="Wait for something that never comes.")
async def hang(seconds: float = 3600) -> str:
    import anyio

    await anyio.sleep(seconds)
    return "woke up"


def trace_parent(ctx: Context) -> str:
    meta = ctx.request_context.meta or {}
    return str(meta.get("traceparent") or "none")


if "--trace" in sys.argv:
    server.tool(description="The trace context this request carried.")(trace_parent)


def serve_http(port: int, token: str) -> None:
    """Streamable HTTP on 127.0.0.1:PORT/mcp, answering only ``Authorization: Bearer TOKEN``."""
    import uvicorn

    app = server.streamable_http_app()
    expected = f"Bearer {token}".encode()

    async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    if "--hang-at-start" in sys.argv:
        import time

        time.sleep(3600)
    if "--exit-at-start" in sys.argv:
        print("test server: refusing to start", file=sys.stderr)
        sys.exit(1)
    if "--http" in sys.argv:
        serve_http(int(sys.argv[sys.argv.index("--http") + 1]), os.environ["MCP_TOKEN"])
    else:
        server.run("stdio")
        if "--linger" in sys.argv:
            import time

            time.sleep(3600)
