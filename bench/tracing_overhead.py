"""Tracing overhead: one scripted 20-tool-call turn, tracing off versus on, in one run.

Run: uv run python bench/tracing_overhead.py [-n 30] [--content] [--model-ms 50]
Target (issue 9): tracing adds at most 10 % to a turn.

The model is pydantic-ai's scripted FunctionModel (no network, no latency), each tool
reads a real file, so the turn is pure Co + pydantic-ai work and the overhead measured
here is the worst case: with a real model, each request adds hundreds of milliseconds
that tracing does not touch. Off and on runs are interleaved so machine noise hits both.
Tracing "on" means what `co chat` does: SQLite exporter behind a BatchSpanProcessor,
secrets redaction and cost computed on its worker thread (its CPU time counts too,
since the worker shares the machine).

A third, "spans only" column runs the same turn instrumented the same way but with a
TracerProvider that has no exporter: the spans are made and thrown away. It separates
what pydantic-ai's instrumentation costs on the turn's thread from what Co's export
(redaction, cost, SQLite) adds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

TOOL_CALLS = 20


def build_agent(folder: Path, model_ms: float = 0.0):  # noqa: ANN201
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    def script(messages, info):  # noqa: ANN001, ANN202
        if model_ms:
            time.sleep(model_ms / 1000)  # a model's thinking time (tracing never adds to it)
        done = sum(isinstance(p, ToolCallPart) for m in messages for p in getattr(m, "parts", []))
        if done < TOOL_CALLS:
            return ModelResponse(parts=[ToolCallPart("read_note", {"name": f"note{done}.md"})])
        return ModelResponse(parts=[TextPart(f"Read {done} notes.")])

    agent = Agent(FunctionModel(script, model_name="scripted"), name="co")

    @agent.tool_plain
    def read_note(name: str) -> str:
        """Read one note."""
        return (folder / name).read_text(encoding="utf-8")

    return agent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=30)
    parser.add_argument("--content", action="store_true", help="record content too")
    parser.add_argument(
        "--model-ms",
        type=float,
        default=0.0,
        help="milliseconds each scripted model request takes (default 0: worst case)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["CO_DATA_DIR"] = str(root / "data")
        os.environ["CO_CONFIG_DIR"] = str(root / "config")
        notes = root / "notes"
        notes.mkdir()
        for i in range(TOOL_CALLS):
            (notes / f"note{i}.md").write_text(f"# Note {i}\n" + "lorem ipsum " * 200)

        from opentelemetry.sdk.trace import TracerProvider

        from co_core import telemetry
        from co_core.telemetry import setup, spans
        from co_core.telemetry.settings import TelemetrySettings

        settings = TelemetrySettings(include_content=args.content)
        plain = telemetry.instrument(
            build_agent(notes, args.model_ms)
        )  # tracing off: not instrumented
        bare_provider = TracerProvider()  # no exporter: spans made, then dropped
        telemetry.setup_tracing(settings)
        traced = telemetry.instrument(build_agent(notes, args.model_ms))
        made = build_agent(notes, args.model_ms)
        made.instrument = telemetry.instrumentation_settings(bare_provider)
        tracer = setup.current_provider().get_tracer("co")
        tracers = {"off": None, "spans": bare_provider.get_tracer("co"), "on": tracer}
        agents = {"off": plain, "spans": made, "on": traced}

        def turn(mode: str) -> tuple[float, float]:
            # off: Co's spans are no-ops and the agent is not instrumented, as in `co chat`
            # with telemetry.enabled = false. On: the turn plus writing its spans (flushed
            # inside the timing, so the export's cost is charged to the turn that made it).
            spans.activate(tracers[mode], args.content)
            start, cpu = time.perf_counter(), time.process_time()
            with telemetry.turn("bench", model="function:scripted"):
                result = agents[mode].run_sync("read my notes")
            if mode == "on":
                telemetry.flush()
            elapsed = time.perf_counter() - start, time.process_time() - cpu
            assert result.output == f"Read {TOOL_CALLS} notes.", result.output
            return elapsed

        modes = ("off", "spans", "on")
        for _ in range(3):  # warm up every path
            for mode in modes:
                turn(mode)
        times: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
        for i in range(args.runs):
            order = modes[i % 3 :] + modes[: i % 3]  # none always goes first
            for mode in order:
                times[mode].append(turn(mode))
        telemetry.flush()
        import sqlite3

        conn = sqlite3.connect(settings.database())
        rows = conn.execute("SELECT count(*) FROM spans").fetchone()[0]
        conn.close()
        telemetry.shutdown_tracing()

    spans_per_turn = 1 + 1 + (TOOL_CALLS + 1) + TOOL_CALLS  # turn, run, requests, tools
    print(
        f"{TOOL_CALLS}-tool-call scripted turn, {args.runs} runs each, interleaved; "
        f"model requests take {args.model_ms:g} ms"
    )
    print(f"tracing on = {spans_per_turn} spans per turn written to SQLite (flushed in the timing)")
    for column, label in ((0, "wall time"), (1, "CPU time ")):
        off, only, on = (statistics.median(t[column] for t in times[m]) for m in modes)
        # each round's on/off ratio, then their median: a machine that slows down or
        # speeds up during the run moves both turns of a round alike
        added = statistics.median(
            a[column] / b[column] for a, b in zip(times["on"], times["off"], strict=True)
        )
        only_added = statistics.median(
            a[column] / b[column] for a, b in zip(times["spans"], times["off"], strict=True)
        )
        print(
            f"  {label}: off {off * 1000:7.1f} ms, on {on * 1000:7.1f} ms, "
            f"added {(on - off) * 1000:6.1f} ms = {100 * (added - 1):+5.1f} % "
            f"({(on - off) * 1e6 / spans_per_turn:.0f} us per span); "
            f"spans only (no export) {100 * (only_added - 1):+5.1f} %"
        )
    print("  (percentages: median over rounds of each round's ratio to the untraced turn)")
    print(f"  spans in the database: {rows}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
