"""A real MCP server over stdio, written with the ``mcp`` SDK, for Co's MCP tests.

Run as ``python mcp_test_server.py [--exit-at-start]``. ``write_note`` appends to the file
named by ``NOTE_FILE`` so a test can see whether a call really ran; ``crash`` kills the
process mid-call.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

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
    if "--exit-at-start" in sys.argv:
        print("test server: refusing to start", file=sys.stderr)
        sys.exit(1)
    if "--http" in sys.argv:
        serve_http(int(sys.argv[sys.argv.index("--http") + 1]), os.environ["MCP_TOKEN"])
    else:
        server.run("stdio")
