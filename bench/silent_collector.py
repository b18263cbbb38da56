"""What a collector that accepts connections and never answers adds to ``co ask``, in one run.

Run: uv run python bench/silent_collector.py [-n 3] [--timeout SECONDS]
Target (docs/observability.md, issue 31): at most the export timeout (5 s by default).

Each round runs the real ``co`` command three ways against a local OpenAI-compatible
server (tests/openai_server.py; one tool call, then the answer): no collector, a
collector that answers (a local HTTP server taking every export with 200), and a silent
one (a TCP server that accepts the connection, reads nothing and never answers). Rounds
interleave the three so machine noise hits all alike. Reported: each way's median wall
time and what the silent collector adds to the no-collector run, against the bound.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CO = str(Path(sys.executable).parent / "co")


class Taking(BaseHTTPRequestHandler):
    """A collector that takes every export (OTLP/HTTP answers 200 with an empty body)."""

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def answer(body: dict[str, Any]) -> dict[str, Any]:
    if body["messages"][-1]["role"] == "tool":
        return {"text": "sum is " + body["messages"][-1]["content"]}
    return {"tool": "add_numbers", "args": {"a": 2, "b": 3}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--timeout", help="OTEL_EXPORTER_OTLP_TIMEOUT (seconds) to set")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent / "tests"))
    from collector_fakes import Silent
    from openai_server import Server

    silent = Silent()
    taking = ThreadingHTTPServer(("127.0.0.1", 0), Taking)
    threading.Thread(target=taking.serve_forever, daemon=True).start()
    collectors = {
        "none": None,
        "answering": f"http://127.0.0.1:{taking.server_address[1]}",
        "silent": silent.url,
    }
    times: dict[str, list[float]] = {way: [] for way in collectors}
    with tempfile.TemporaryDirectory() as tmp, Server(answer) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "CO_TELEMETRY"))}
        for kind in ("DATA", "CONFIG", "CACHE"):
            env[f"CO_{kind}_DIR"] = str(Path(tmp) / kind.lower())
        env["CO_LOAD_PLUGINS"] = "testplug"
        env["PYTHONPATH"] = str(HERE.parent / "tests" / "fixture_plugin")
        if args.timeout:
            env["OTEL_EXPORTER_OTLP_TIMEOUT"] = args.timeout
        command = [CO, "ask", "-m", "openai-compatible:tiny", "--base-url", server.base_url]

        def run(way: str) -> float:
            run_env = dict(env)
            if collectors[way]:
                run_env["OTEL_EXPORTER_OTLP_ENDPOINT"] = str(collectors[way])
            start = time.perf_counter()
            done = subprocess.run(
                [*command, "add 2 and 3"], env=run_env, capture_output=True, text=True
            )
            elapsed = time.perf_counter() - start
            if done.returncode != 0 or done.stdout.strip() != "sum is 5":
                sys.exit(f"co ask failed ({way}): {done.stdout}{done.stderr}")
            return elapsed

        run("none")  # warm up: bytecode, the trace database
        ways = tuple(collectors)
        for i in range(args.runs):
            for way in ways[i % 3 :] + ways[: i % 3]:
                times[way].append(run(way))
    bound = float(args.timeout) if args.timeout else 5.0
    median = {way: statistics.median(t) for way, t in times.items()}
    print(f"co ask (one tool call) against a local OpenAI-compatible server, {args.runs} rounds")
    for way in ways:
        print(
            f"  collector {way:9}: median {median[way]:6.2f} s  ({', '.join(f'{t:.2f}' for t in times[way])})"
        )
    added = median["silent"] - median["none"]
    print(
        f"  a silent collector adds {added:.2f} s to the run (bound: {bound:g} s, the export "
        f"timeout); it was connected to {len(silent.accepted)} times"
    )


if __name__ == "__main__":
    main()
