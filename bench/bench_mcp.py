"""MCP round trips (run: uv run python bench/bench_mcp.py).

1. Co as a client: calls to the SDK-built test server (tests/mcp_test_server.py) over stdio,
   through Co's ServerToolset (prefixing, spec registration, failure isolation) vs
   pydantic-ai's bare MCPToolset: the cost of Co's layer per call.
2. Co as a server: ``co mcp serve`` driven by the mcp SDK client: start-up to first tool
   list, then calls of an allowed read tool (policy decision + audit line + run).

Uses private XDG dirs under a temp folder.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVER = str(ROOT / "tests" / "mcp_test_server.py")
CALLS = 200


async def _client_calls(toolset: Any, name: str) -> list[float]:
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    times = []
    async with toolset:
        tools = await toolset.get_tools(ctx)
        tool = tools[name]
        for i in range(CALLS):
            start = time.perf_counter()
            await toolset.call_tool(name, {"text": f"x{i}"}, ctx, tool)
            times.append(time.perf_counter() - start)
    return times


def _report(label: str, times: list[float]) -> None:
    ms = sorted(t * 1000 for t in times)
    print(
        f"{label:44} median {statistics.median(ms):6.2f} ms  p95 {ms[int(len(ms) * 0.95)]:6.2f} ms"
        f"  ({len(ms)} calls)"
    )


def bench_client() -> None:
    import anyio
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    from co_core.mcp.settings import Declared, McpServer
    from co_core.mcp.toolsets import ServerState, ServerToolset, build_client

    bare = MCPToolset(StdioTransport(sys.executable, [SERVER], keep_alive=False))
    _report("client: bare pydantic-ai MCPToolset", anyio.run(_client_calls, bare, "echo"))
    declared = Declared("t", McpServer(command=sys.executable, args=[SERVER]), "user", None)
    co = ServerToolset(
        build_client(declared, workspace=Path.cwd(), timeout=10),
        server="t",
        specs={},
        state=ServerState("t"),
    )
    _report("client: Co ServerToolset (same server)", anyio.run(_client_calls, co, "t_echo"))


def bench_serve(tmp: Path) -> None:
    import anyio
    from mcp import Client, StdioServerParameters

    from co_core.testing import install_fake_plugin

    site = tmp / "site"
    install_fake_plugin(
        site,
        "bench",
        """
        from co_core import hookimpl

        @hookimpl
        def register_tools(register):
            register("co_bench_tools:echo", risk="read", permission="bench:read:{text}")
        """,
    )
    (site / "co_bench_tools.py").write_text(
        textwrap.dedent(
            '''
            from pydantic_ai import RunContext

            def echo(ctx: RunContext, text: str) -> str:
                """Echo."""
                return text
            '''
        )
    )
    env = {
        "PYTHONPATH": str(site),
        "CO_LOAD_PLUGINS": "bench",
        **{
            f"CO_{k.upper()}_DIR": os.environ[f"CO_{k.upper()}_DIR"]
            for k in ("config", "data", "cache")
        },
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "co_core", "mcp", "serve"], env=env, cwd=str(tmp)
    )

    async def main() -> tuple[float, list[float]]:
        start = time.perf_counter()
        async with Client(params) as client:
            await client.list_tools()
            ready = time.perf_counter() - start
            times = []
            for i in range(CALLS):
                t0 = time.perf_counter()
                result = await client.call_tool("echo", {"text": f"x{i}"})
                assert not result.is_error, result
                times.append(time.perf_counter() - t0)
        return ready, times

    ready, times = anyio.run(main)
    print(f"{'serve: start to first tools/list':44} {ready * 1000:8.0f} ms")
    _report("serve: allowed read call (decide+audit+run)", times)


def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    for kind in ("config", "data", "cache"):
        os.environ[f"CO_{kind.upper()}_DIR"] = str(tmp / kind)
        (tmp / kind).mkdir()
    bench_client()
    bench_serve(tmp)


if __name__ == "__main__":
    main()
