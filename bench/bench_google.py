"""co-google costs: hook import, first client build (static discovery), calls on a local fake.

Run: uv run python bench/bench_google.py [calls]
Numbers are wall-clock on this machine; the local fake removes network time, so what is
left is Co's and google-api-python-client's own overhead.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "plugins/co_google/tests"))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def import_cost() -> float:
    code = (
        "import time; t=time.perf_counter(); import co_google.plugin; print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def main(calls: int = 50) -> None:
    from fake_google import FakeGoogle, start

    fake = FakeGoogle()
    server = start(fake)
    for n in range(200):
        fake.drive_files[f"f{n}"] = {
            "id": f"f{n}",
            "name": f"Report {n}",
            "mimeType": "text/plain",
            "text": "q",
        }
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("config", "data", "cache"):
            os.environ[f"CO_{kind.upper()}_DIR"] = str(Path(tmp) / kind)
            (Path(tmp) / kind).mkdir()
        token = Path(tmp) / "config" / "google-token.json"
        token.write_text(
            json.dumps(
                {
                    "token": "good-token",
                    "refresh_token": "good-refresh",
                    "client_id": "c",
                    "client_secret": "s",
                    "expiry": "2099-01-01T00:00:00Z",
                }
            )
        )
        from co_google.tools.drive import search_drive
        from pydantic_ai import RunContext
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.usage import RunUsage

        from co_core.testing import make_deps

        deps = make_deps({"google": {"api_endpoint": fake.url, "use_adc": False}})
        ctx = RunContext(deps=deps, model=TestModel(), usage=RunUsage())
        started = time.perf_counter()
        deps.resource("google").client("drive")
        build = time.perf_counter() - started
        timings = []
        for _ in range(calls):
            started = time.perf_counter()
            search_drive(ctx, query="report")
            timings.append(time.perf_counter() - started)
        deps.close()
    server.shutdown()
    print(f"import co_google.plugin (fresh process): {ms(import_cost())}")
    print(f"first Drive client build (static discovery): {ms(build)}")
    print(
        f"search_drive on local fake, {calls} calls: median {ms(statistics.median(timings))}, "
        f"p95 {ms(sorted(timings)[int(calls * 0.95) - 1])}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
