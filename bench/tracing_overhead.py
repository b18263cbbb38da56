"""Tracing overhead: one scripted 20-tool-call turn of Co, tracing off versus on, in one run.

Run: uv run python bench/tracing_overhead.py [-n 30] [--content] [--model-ms 50]
     [--pydantic-request-spans] [--before] [--count-calls 20]
Target (issue 9): tracing adds at most 10 % to a turn.

The turn is what ``co chat`` runs: Co's session and agent (policy gate, audit trail, context
fitting, session store) with the test plugin's ``lookup`` tool, driven by a scripted
model that asks for one call per request (no network, no latency), so the overhead
measured is the worst case: with a real model, each request adds hundreds of
milliseconds that tracing does not touch. Off and on turns are interleaved so machine
noise hits both. Tracing "on" means what ``co chat`` does: the spans (co.turn, the run,
each request and each tool call, made by pydantic-ai's instrumentation as Co configures
it) into the SQLite exporter behind a BatchSpanProcessor,
secrets redaction and cost computed on its worker thread (its CPU time counts too, since
the worker shares the machine), flushed inside the timing.

A third, "spans only" column makes the same spans with a TracerProvider that exports
nothing: it separates what making spans costs on the turn's thread from what the export
(redaction, cost, SQLite) adds. A fourth, "sampled out", runs pydantic-ai's
instrumentation with a sampler that drops every span: what its bookkeeping costs without
OpenTelemetry making a span. ``--before`` adds a fifth, interleaved too: tracing on as it
was before issue 40's cuts (pydantic-ai's own request-span step and its metrics).
Besides wall time and process CPU, the turn's own thread CPU (``thread``), which the
machine's other work moves least, and what the export in the flush took.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

TOOL_CALLS = 20
HERE = Path(__file__).resolve().parent


def script(model_ms: float):  # noqa: ANN201
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

    def respond(messages: list, info: object) -> ModelResponse:
        if model_ms:
            time.sleep(model_ms / 1000)  # a model's thinking time (tracing never adds to it)
        done = sum(isinstance(p, ToolCallPart) for m in messages for p in getattr(m, "parts", []))
        if done < TOOL_CALLS:
            colour = ("red", "blue")[done % 2]
            return ModelResponse(parts=[ToolCallPart("lookup", {"query": colour})])
        return ModelResponse(parts=[TextPart(f"Looked up {done} colours.")])

    return respond


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
    parser.add_argument(
        "--pydantic-request-spans",
        action="store_true",
        help="request spans made by pydantic-ai's own step (which prepares each request a "
        "second time and serialises every tool into it), to compare with Co's lean one",
    )
    parser.add_argument(
        "--before",
        action="store_true",
        help="add a column: tracing on with pydantic-ai's own request-span step and metrics",
    )
    parser.add_argument(
        "--count-calls",
        type=int,
        default=0,
        metavar="TURNS",
        help="also count Python calls a turn per column (cProfile over TURNS turns each): a "
        "figure the machine's load does not move",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for kind in ("DATA", "CONFIG", "CACHE"):
            os.environ[f"CO_{kind}_DIR"] = str(root / kind.lower())
        os.environ["CO_LOAD_PLUGINS"] = "testplug"
        sys.path.insert(0, str(HERE.parent / "tests" / "fixture_plugin"))

        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
        from pydantic_ai import _instrumentation
        from pydantic_ai.capabilities import Instrumentation
        from pydantic_ai.models.instrumented import InstrumentationSettings

        from co_core import telemetry
        from co_core.agent.conversation import Conversation
        from co_core.agent.models import ResolvedModel
        from co_core.kernel.app import load_app
        from co_core.telemetry import setup, spans
        from co_core.testing import scripted_model

        def conversation(traced: bool) -> Conversation:
            # off: as with telemetry.enabled = false (no tracing capability, Co's spans no-ops)
            os.environ["CO_TELEMETRY"] = "1" if traced else "0"
            chat = Conversation(load_app(), trace_content=args.content)
            chat.model = ResolvedModel(scripted_model(script(args.model_ms)), "scripted")
            chat.prepare()
            return chat

        untraced = conversation(traced=False)
        traced = conversation(traced=True)
        lean = _instrumentation._prepare_model_request_span_context
        if args.pydantic_request_spans:
            _instrumentation._prepare_model_request_span_context = lean.full  # type: ignore[attr-defined]
        app = traced.app
        capability = next(  # pydantic-ai's instrumentation, as Co configures it
            part for part in traced.ready().capabilities.parts if isinstance(part, Instrumentation)
        )
        tracer = setup.current_provider().get_tracer("co")
        bare_tracer = TracerProvider().get_tracer("co")  # no exporter: spans made, then dropped
        dropped = TracerProvider(sampler=ALWAYS_OFF).get_tracer("co")  # no span recorded
        tracers = {"off": None, "spans": bare_tracer, "on": tracer, "sampled": dropped}
        tracers["before"] = tracer
        settings = capability.settings
        exports: list[float] = []

        def turn(mode: str) -> tuple[float, float, float]:
            # on: the turn plus writing its spans (flushed inside the timing, so the
            # export's cost is charged to the turn that made it)
            spans.activate(tracers[mode], args.content)
            session = untraced if mode == "off" else traced
            settings.tracer = tracers[mode] or tracer
            if mode == "before":  # pydantic-ai's own request-span step and metrics
                _instrumentation._prepare_model_request_span_context = lean.full  # type: ignore[attr-defined]
                settings.record_metrics = InstrumentationSettings.record_metrics.__get__(settings)  # type: ignore[method-assign]
            session.history = []
            start, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
            result = asyncio.run(session.run_turn("look up some colours"))
            if mode in ("on", "before"):
                flushed = time.thread_time()
                telemetry.flush()
                if mode == "on":
                    exports.append(time.thread_time() - flushed)
            elapsed = (
                time.perf_counter() - start,
                time.process_time() - cpu,
                time.thread_time() - own,
            )
            if mode == "before":
                if not args.pydantic_request_spans:
                    _instrumentation._prepare_model_request_span_context = lean
                del settings.record_metrics
            assert result.output == f"Looked up {TOOL_CALLS} colours.", result.output
            return elapsed

        modes: tuple[str, ...] = ("off", "spans", "on", "sampled")
        if args.before:
            modes += ("before",)
        for _ in range(3):  # warm up every path
            for mode in modes:
                turn(mode)
        times: dict[str, list[tuple[float, float, float]]] = {mode: [] for mode in modes}
        for i in range(args.runs):
            order = modes[i % len(modes) :] + modes[: i % len(modes)]  # none always first
            for mode in order:
                times[mode].append(turn(mode))
        calls: dict[str, float] = {}
        if args.count_calls:
            import cProfile
            import pstats

            for mode in modes:
                profile = cProfile.Profile()
                profile.enable()
                for _ in range(args.count_calls):
                    turn(mode)
                profile.disable()
                calls[mode] = pstats.Stats(profile).total_calls / args.count_calls  # type: ignore[attr-defined]
        telemetry.flush()
        import sqlite3

        database = setup.telemetry_settings(app.settings).database()
        conn = sqlite3.connect(database)
        rows = conn.execute("SELECT count(*) FROM spans WHERE name != 'co.plugin.load'").fetchone()[
            0
        ]
        conn.close()
        untraced.close()
        traced.close()

    spans_per_turn = 1 + 1 + (TOOL_CALLS + 1) + TOOL_CALLS  # turn, run, requests, tools
    print(
        f"{TOOL_CALLS}-tool-call scripted turn, {args.runs} runs each, interleaved; "
        f"model requests take {args.model_ms:g} ms"
    )
    print(f"tracing on = {spans_per_turn} spans per turn written to SQLite (flushed in the timing)")
    if args.pydantic_request_spans:
        print("request spans: pydantic-ai's own step (Co's lean one put aside)")

    def added(mode: str, column: int) -> float:
        # each round's ratio to the untraced turn, then their median: a machine that slows
        # down or speeds up during the run moves both turns of a round alike
        pairs = zip(times[mode], times["off"], strict=True)
        return 100 * (statistics.median(a[column] / b[column] for a, b in pairs) - 1)

    for column, label in ((0, "wall time"), (1, "CPU time "), (2, "thread   ")):
        off, on = (statistics.median(t[column] for t in times[m]) for m in ("off", "on"))
        print(
            f"  {label}: off {off * 1000:7.1f} ms, on {on * 1000:7.1f} ms, "
            f"added {(on - off) * 1000:6.1f} ms = {added('on', column):+5.1f} % "
            f"({(on - off) * 1e6 / spans_per_turn:.0f} us per span); "
            f"spans only (no export) {added('spans', column):+5.1f} %, "
            f"sampled out {added('sampled', column):+5.1f} %"
            + (f"; before {added('before', column):+5.1f} %" if args.before else "")
        )
    print("  (percentages: median over rounds of each round's ratio to the untraced turn)")
    print(
        f"  export in the flush (redaction, cost, SQLite): {statistics.median(exports) * 1000:.2f} ms"
    )
    print(f"  spans in the database: {rows}")
    if calls:
        print(
            "  Python calls a turn: "
            + ", ".join(
                f"{mode} {n / 1000:.1f}k ({100 * (n / calls['off'] - 1):+.1f} %)"
                for mode, n in calls.items()
            )
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
