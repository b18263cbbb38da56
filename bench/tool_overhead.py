"""Co's own overhead per tool call: Co's agent vs a bare pydantic-ai agent, same tools, same script.

Both run the same scripted model (10 parallel ``add_numbers`` calls per response, 20
rounds = 200 calls per turn) with streaming on. Co's side adds what a real turn has:
the approval gate, call records, text-tool-call recovery and the REPL's rendering
(spinner, live region and tool lines, to an in-memory terminal). Run: ``uv run python bench/tool_overhead.py``

Co's turns alternate between traced (as ``co chat`` runs by default: Co's spans of the
turn, run, requests and calls, SQLite export) and untraced (as with ``CO_TELEMETRY=0``),
so one run shows how much of Co's overhead is tracing and how much the rest.
"""

from __future__ import annotations

import asyncio
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "fixture_plugin"))
for kind in ("CONFIG", "DATA", "CACHE"):
    os.environ.setdefault(f"CO_{kind}_DIR", tempfile.mkdtemp(prefix=f"co-bench-{kind.lower()}-"))
os.environ["CO_LOAD_PLUGINS"] = "testplug"
os.environ["PYDANTIC_AI_NO_BANNER"] = "1"

from pydantic_ai import Agent, Tool  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.usage import UsageLimits  # noqa: E402
from rich.console import Console  # noqa: E402

from co_core.app import load_app  # noqa: E402
from co_core.deps import CoDeps  # noqa: E402
from co_core.models import ResolvedModel  # noqa: E402
from co_core.repl import TurnView  # noqa: E402
from co_core.scripted import scripted_model  # noqa: E402
from co_core.session import Session  # noqa: E402

ROUNDS, PER_ROUND, REPEATS = 20, 10, 11
CALLS = ROUNDS * PER_ROUND


def script(messages: list, info: object) -> ModelResponse:
    requests = sum(1 for m in messages if m.kind == "response")
    if requests >= ROUNDS:
        return ModelResponse(parts=[TextPart("done")])
    return ModelResponse(
        parts=[ToolCallPart("add_numbers", {"a": i, "b": requests}) for i in range(PER_ROUND)]
    )


async def drain(ctx: object, events: object) -> None:
    async for _ in events:  # type: ignore[attr-defined]
        pass


def bare_agent(deps: CoDeps) -> Agent:
    from co_testplug.tools import add_numbers, lookup

    return Agent(
        scripted_model(script), deps_type=CoDeps, tools=[Tool(add_numbers), Tool(lookup)], retries=3
    )


async def time_bare(agent: Agent, deps: CoDeps) -> float:
    start = time.perf_counter()
    await agent.run("go", deps=deps, usage_limits=UsageLimits(request_limit=ROUNDS + 5),
                    event_stream_handler=drain)  # fmt: skip
    return time.perf_counter() - start


async def time_co(session: Session, traced: bool = True) -> float:
    from co_core import telemetry
    from co_core.telemetry import spans

    hooks = session.ready().hooks
    saved = spans._state["tracer"], spans._state["content"], hooks.tracing
    if not traced:  # what CO_TELEMETRY=0 gives: no agent spans, Co's spans no-ops
        spans.activate(None, False)
        hooks.tracing = None
    view = TurnView(Console(file=io.StringIO(), width=100, force_terminal=True))
    session.history = []
    try:
        start = time.perf_counter()
        view.start()  # spinner + live region, as in the REPL
        await session.run_turn("go", view.on_event)
        view.stop()
        if traced:
            telemetry.flush()  # the export's work is charged to the turn that made it
        return time.perf_counter() - start
    finally:
        spans.activate(saved[0], saved[1])
        hooks.tracing = saved[2]


async def main() -> None:
    app = load_app()
    session = Session(app)
    session.prepare()
    session._model = ResolvedModel(scripted_model(script), "scripted")
    session.ready().limits.request_limit = ROUNDS + 5
    deps = session.deps
    bare = bare_agent(deps)
    await time_bare(bare, deps)  # warm up all three
    await time_co(session)
    await time_co(session, traced=False)
    bare_times, co_times, untraced_times = [], [], []
    for _ in range(REPEATS):  # interleaved, so machine noise hits all alike
        bare_times.append(await time_bare(bare, deps))
        co_times.append(await time_co(session))
        untraced_times.append(await time_co(session, traced=False))
    b, c = statistics.median(bare_times), statistics.median(co_times)
    u = statistics.median(untraced_times)
    # each round's ratio, then their median: a machine that slows down or speeds up during
    # the run moves all three turns of a round alike
    rc = statistics.median(x / y for x, y in zip(co_times, bare_times, strict=True))
    ru = statistics.median(x / y for x, y in zip(untraced_times, bare_times, strict=True))
    print(
        f"tool calls per turn: {CALLS} ({ROUNDS} model requests x {PER_ROUND} calls), {REPEATS} runs each"
    )
    print(f"bare pydantic-ai: {b * 1000:8.1f} ms/turn  {b / CALLS * 1000:.3f} ms/call")
    print(f"co             : {c * 1000:8.1f} ms/turn  {c / CALLS * 1000:.3f} ms/call")
    print(f"co, untraced   : {u * 1000:8.1f} ms/turn  {u / CALLS * 1000:.3f} ms/call")
    print(f"ratio co/bare  : {rc:.2f}x   co overhead: {(c - b) / CALLS * 1000:.3f} ms/call")
    print(f"ratio untraced : {ru:.2f}x   co overhead: {(u - b) / CALLS * 1000:.3f} ms/call")
    print("(ratios: median over rounds of each round's ratio to the bare turn)")
    print("targets: ratio <= 1.25x and overhead <= 2 ms/call")


if __name__ == "__main__":
    asyncio.run(main())
