"""Co's own overhead per tool call: Co's agent vs a bare pydantic-ai agent, same tools, same script.

Both run the same scripted model (10 parallel ``add_numbers`` calls per response, 20
rounds = 200 calls per turn) with streaming on. Co's side adds what a real turn has:
the policy gate and one record per call (audit lines included), text-tool-call recovery,
context fitting and the REPL's rendering (spinner, live region and tool lines, to an
in-memory terminal). Run: ``uv run python bench/tool_overhead.py``

Co's turns alternate between a conversation built traced (as ``co chat`` runs by default:
Co's spans of the turn, run, requests and calls, SQLite export) and one built untraced (as
with ``CO_TELEMETRY=0``), so one run shows how much of Co's overhead is tracing.
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
_SCRATCH = tempfile.TemporaryDirectory(prefix="co-bench-")  # removed when the run ends
for kind in ("CONFIG", "DATA", "CACHE"):
    os.environ.setdefault(f"CO_{kind}_DIR", str(Path(_SCRATCH.name) / kind.lower()))
os.environ["CO_LOAD_PLUGINS"] = "testplug"
os.environ["PYDANTIC_AI_NO_BANNER"] = "1"

from pydantic_ai import Agent, Tool  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.usage import UsageLimits  # noqa: E402
from rich.console import Console  # noqa: E402

from co_core.agent.conversation import Conversation  # noqa: E402
from co_core.agent.models import ResolvedModel  # noqa: E402
from co_core.kernel.app import load_app  # noqa: E402
from co_core.kernel.deps import CoDeps  # noqa: E402
from co_core.testing import scripted_model  # noqa: E402
from co_core.ui.repl import TurnView  # noqa: E402

ROUNDS, PER_ROUND, REPEATS = 20, 10, 31
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


def clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> tuple[float, float]:
    """Wall and CPU time (this process, all its threads) since ``start``."""
    wall, cpu = clocks()
    return wall - start[0], cpu - start[1]


async def time_bare(agent: Agent, deps: CoDeps) -> tuple[float, float]:
    start = clocks()
    await agent.run("go", deps=deps, usage_limits=UsageLimits(request_limit=ROUNDS + 5),
                    event_stream_handler=drain)  # fmt: skip
    return since(start)


class Lines:
    """The REPL's frontend for the benchmark: tool lines drawn as ``co chat`` draws them."""

    interactive = False

    def __init__(self) -> None:
        self.view: TurnView | None = None

    async def approve(self, record: object) -> object:
        raise AssertionError("the benchmark's tools need no approval")

    async def announce(self, records: object) -> None:
        return None

    def show(self, record: object) -> None:
        if self.view is not None:
            self.view.show(record)  # type: ignore[arg-type]

    def warn(self, message: str) -> None:
        print(message)


def conversation(traced: bool) -> Conversation:
    """A conversation built with tracing on (as ``co chat`` runs by default) or off (as
    with ``CO_TELEMETRY=0``): the traced one has the tracing capability."""
    from co_core.telemetry import spans

    os.environ["CO_TELEMETRY"] = "1" if traced else "0"
    chat = Conversation(load_app(), frontend=Lines())
    chat.model = ResolvedModel(scripted_model(script), "scripted")
    chat.prepare()
    chat.ready().limits.request_limit = ROUNDS + 5
    chat.tracer = spans._state["tracer"]  # type: ignore[attr-defined]
    return chat


async def time_co(chat: Conversation, traced: bool) -> tuple[float, float]:
    from co_core import telemetry
    from co_core.telemetry import spans

    spans.activate(chat.tracer if traced else None, False)  # type: ignore[attr-defined]
    view = TurnView(Console(file=io.StringIO(), width=100, force_terminal=True))
    chat.frontend.view = view  # type: ignore[attr-defined]
    chat.history = []
    start = clocks()
    view.start()  # spinner + live region, as in the REPL
    await chat.run_turn("go", view.on_event)
    view.stop()
    if traced:
        telemetry.flush()  # the export's work is charged to the turn that made it
    return since(start)


async def main() -> None:
    untraced = conversation(traced=False)
    traced = conversation(traced=True)
    deps = traced.deps
    bare = bare_agent(deps)
    for _ in range(2):  # warm up all three
        await time_bare(bare, deps)
        await time_co(traced, True)
        await time_co(untraced, False)
    bare_times: list[tuple[float, float]] = []
    co_times: list[tuple[float, float]] = []
    untraced_times: list[tuple[float, float]] = []
    turns = [
        (bare_times, lambda: time_bare(bare, deps)),
        (co_times, lambda: time_co(traced, True)),
        (untraced_times, lambda: time_co(untraced, False)),
    ]
    for i in range(REPEATS):  # interleaved, so machine noise hits all alike, in turning order
        for times, timed in turns[i % 3 :] + turns[: i % 3]:
            times.append(await timed())
    print(f"tool calls per turn: {CALLS} ({ROUNDS} model requests x {PER_ROUND} calls), "
          f"{REPEATS} rounds")  # fmt: skip
    for column, label in ((0, "wall"), (1, "CPU")):
        b, c, u = (statistics.median(t[column] for t in times) for times, _ in turns)
        print(f"{label} time, median ms per turn (per call): bare pydantic-ai {b * 1000:.1f} "
              f"({b / CALLS * 1000:.3f}), co {c * 1000:.1f} ({c / CALLS * 1000:.3f}), "
              f"co untraced {u * 1000:.1f} ({u / CALLS * 1000:.3f})")  # fmt: skip
        for name, times, total in (("co", co_times, c), ("co untraced", untraced_times, u)):
            # each round's ratio, then their median (and quartiles): a machine that slows
            # down or speeds up during the run moves all three turns of a round alike
            ratios = sorted(x[column] / y[column] for x, y in zip(times, bare_times, strict=True))
            q1, median, q3 = statistics.quantiles(ratios, n=4)
            print(f"  {name:12}/ bare: {median:.2f}x (quartiles {q1:.2f}-{q3:.2f}), "
                  f"overhead {(total - b) / CALLS * 1000:.3f} ms/call")  # fmt: skip
    print("targets: ratio <= 1.25x and overhead <= 2 ms/call")


if __name__ == "__main__":
    asyncio.run(main())
