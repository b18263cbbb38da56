"""MCP costs (run: uv run python bench/bench_mcp.py [--turns N] [--calls N]).

1. Turns: a conversation with three configured MCP servers (the SDK-built test server
   twice and the published mcp-server-time) against one with none, side by side, the same
   scripted "hello" turn alternating between them: the first turn (which may wait for
   the servers to start) and the turns after it (which reuse them).
2. Co as a client: calls to the test server through Co's toolset (the session's servers
   run on their own event loop; each call crosses to it and back) vs pydantic-ai's bare
   MCPToolset on the caller's loop: the cost of Co's layer per call.
3. Co as a server: ``co mcp serve`` driven by the mcp SDK client: start-up to first tool
   list, then calls of an allowed read tool (policy decision + audit line + run).

Uses private XDG dirs under a temp folder.
"""

from __future__ import annotations

import argparse
import asyncio
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
THREE = {
    "notes": {"command": sys.executable, "args": [SERVER]},
    "more": {"command": sys.executable, "args": [SERVER]},
    "time": {
        "command": sys.executable,
        "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
    },
}


def _report(label: str, times: list[float]) -> None:
    ms = sorted(t * 1000 for t in times)
    print(
        f"{label:44} median {statistics.median(ms):6.2f} ms  p95 {ms[int(len(ms) * 0.95)]:6.2f} ms"
        f"  ({len(ms)} calls)"
    )


# -- 1. turns with and without servers ----------------------------------------------------


def _hello(messages: list[Any], info: Any) -> Any:
    from pydantic_ai.messages import ModelResponse, TextPart

    return ModelResponse(parts=[TextPart("Hello! How can I help?")])


def _conversation(tmp: Path, servers: dict[str, Any]) -> Any:
    from co_core.agent.conversation import Conversation
    from co_core.agent.models import ResolvedModel
    from co_core.testing import make_app, scripted_model

    folder = tmp / ("with" if servers else "without")
    folder.mkdir(exist_ok=True)
    app = make_app({"mcp_servers": servers}, cwd=folder)  # written, then read, per app
    chat = Conversation(app, frontend=_Quiet())
    chat.model = ResolvedModel(scripted_model(_hello), "scripted")
    chat.prepare()
    return chat


class _Quiet:
    interactive = False

    async def approve(self, record: Any) -> Any:
        raise AssertionError("nothing to approve")

    async def announce(self, records: Any) -> None:
        return None

    def show(self, record: Any) -> None:
        return None

    def warn(self, message: str) -> None:
        print(f"  warning: {message}")


def bench_turns(tmp: Path, turns: int) -> None:
    import gc

    without = _conversation(tmp, {})
    with_three = _conversation(tmp, THREE)
    runner = asyncio.Runner()  # one loop for the whole chat, as co chat has

    def timed(chat: Any) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        runner.run(chat.run_turn("hello"))
        return time.perf_counter() - wall, time.process_time() - cpu

    try:
        first = {"none": timed(without), "three": timed(with_three)}
        gc.collect()
        times: dict[str, list[tuple[float, float]]] = {"none": [], "three": []}
        for i in range(turns):  # alternating, so machine noise hits both alike
            order = [("none", without), ("three", with_three)]
            for name, chat in order if i % 2 == 0 else reversed(order):
                times[name].append(timed(chat))
        tools = len(with_three.ready().specs) - len(without.ready().specs)
    finally:
        without.close()
        with_three.close()
        runner.close()
    print(f"turns: a scripted 'hello', {turns} turns each after the first; three servers add "
          f"{tools} tools")  # fmt: skip
    print(f"  first turn (wall): no servers {first['none'][0] * 1000:.1f} ms, three servers "
          f"{first['three'][0] * 1000:.1f} ms (waits for the servers to finish starting)")  # fmt: skip
    for column, label in ((0, "wall"), (1, "CPU")):
        none = statistics.median(t[column] for t in times["none"])
        three = statistics.median(t[column] for t in times["three"])
        ratios = sorted(
            a[column] / b[column] for a, b in zip(times["three"], times["none"], strict=True)
        )
        q1, median, q3 = statistics.quantiles(ratios, n=4)
        print(f"  later turns ({label}): no servers {none * 1000:.2f} ms, three servers "
              f"{three * 1000:.2f} ms: {median:.2f}x (quartiles {q1:.2f}-{q3:.2f})")  # fmt: skip
    print("  target: later turns with three servers <= 1.1x a turn with none")


# -- 2. Co as a client --------------------------------------------------------------------


async def _bare_calls(calls: int) -> list[float]:
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import RunContext
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    toolset = MCPToolset(StdioTransport(sys.executable, [SERVER], keep_alive=False))
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    times = []
    async with toolset:
        tools = await toolset.get_tools(ctx)
        for i in range(calls):
            start = time.perf_counter()
            await toolset.call_tool("echo", {"text": f"x{i}"}, ctx, tools["echo"])
            times.append(time.perf_counter() - start)
    return times


async def _co_calls(toolset: Any, calls: int) -> list[float]:
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    tools = await toolset.get_tools(ctx)
    times = []
    for i in range(calls):
        start = time.perf_counter()
        await toolset.call_tool("t_echo", {"text": f"x{i}"}, ctx, tools["t_echo"])
        times.append(time.perf_counter() - start)
    return times


def bench_client(tmp: Path, calls: int) -> None:
    from co_core.mcp.servers import McpServers
    from co_core.testing import make_app

    _report("client: bare pydantic-ai MCPToolset", asyncio.run(_bare_calls(calls)))
    app = make_app({"mcp_servers": {"t": {"command": sys.executable, "args": [SERVER]}}})
    servers = McpServers(app.settings, tmp)
    try:
        (toolset,) = servers.toolsets({}, print)
        _report("client: Co's toolset (same server)", asyncio.run(_co_calls(toolset, calls)))
    finally:
        servers.close()


# -- 3. Co as a server --------------------------------------------------------------------


def bench_serve(tmp: Path, calls: int) -> None:
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
            for i in range(calls):
                t0 = time.perf_counter()
                result = await client.call_tool("echo", {"text": f"x{i}"})
                assert not result.is_error, result
                times.append(time.perf_counter() - t0)
        return ready, times

    ready, times = anyio.run(main)
    print(f"{'serve: start to first tools/list':44} {ready * 1000:8.0f} ms")
    _report("serve: allowed read call (decide+audit+run)", times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=40, help="turns of each kind (default 40)")
    parser.add_argument("--calls", type=int, default=200, help="calls per client (default 200)")
    parser.add_argument("--only", choices=["turns", "client", "serve"], action="append")
    options = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    for kind in ("config", "data", "cache"):
        os.environ[f"CO_{kind.upper()}_DIR"] = str(tmp / kind)
        (tmp / kind).mkdir()
    os.environ["CO_LOAD_PLUGINS"] = ""  # the same (no) plugins on both sides
    os.environ["PYDANTIC_AI_NO_BANNER"] = "1"
    only = set(options.only or ["turns", "client", "serve"])
    if "turns" in only:
        bench_turns(tmp, options.turns)
    if "client" in only:
        bench_client(tmp, options.calls)
    if "serve" in only:
        bench_serve(tmp, options.calls)


if __name__ == "__main__":
    main()
