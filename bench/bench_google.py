"""co-google costs: hook import, first client build, calls on a local fake.

Run: uv run python bench/bench_google.py [calls] [latency_ms]

Part 1 (no added latency): Co's and google-api-python-client's own overhead per call.
Part 2 (each HTTP request to the fake takes ``latency_ms``, as a round trip to Google
would): a 50-email listing in one batch against one request per email, and eight
``read_email`` calls from parallel threads (as pydantic-ai runs a turn's reads) against
the same eight one after another. Ratios within the run are what to compare.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import threading
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


def main(calls: int = 50, latency_ms: float = 20.0) -> None:
    from fake_google import FakeGoogle, gmail_message, start, write_token

    fake = FakeGoogle()
    server = start(fake)
    for n in range(200):
        fake.drive_files[f"f{n}"] = {
            "id": f"f{n}",
            "name": f"Report {n}",
            "mimeType": "text/plain",
            "text": "q",
        }
    for n in range(60):
        message = gmail_message(
            f"m{n:02d}", sender="a@example.com", subject=f"Report {n}", plain=f"Body {n}"
        )
        fake.messages[message["id"]] = message
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("config", "data", "cache"):
            os.environ[f"CO_{kind.upper()}_DIR"] = str(Path(tmp) / kind)
            (Path(tmp) / kind).mkdir()
        write_token(Path(tmp) / "config" / "google-token.json", fake)
        from co_google.tools.drive import search_drive
        from co_google.tools.gmail import read_email, search_emails
        from pydantic_ai import RunContext
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.usage import RunUsage

        from co_core.testing import make_deps

        deps = make_deps(
            {
                "google": {
                    "api_endpoint": fake.url,
                    "use_adc": False,
                    "token_uri": f"{fake.url}/token",
                }
            }
        )
        ctx = RunContext(deps=deps, model=TestModel(), usage=RunUsage())
        google = deps.resource("google")
        started = time.perf_counter()
        google.client("drive")
        build = time.perf_counter() - started
        timings = []
        for _ in range(calls):
            started = time.perf_counter()
            search_drive(ctx, query="report")
            timings.append(time.perf_counter() - started)

        gmail = google.client("gmail")  # built before timing, as after a first Gmail call
        fake.latency = latency_ms / 1000
        fake.http_requests = 0
        started = time.perf_counter()
        search_emails(ctx, query="report", limit=50)
        batched, batched_requests = time.perf_counter() - started, fake.http_requests
        ids = [f"m{n:02d}" for n in range(50)]
        fake.http_requests = 0
        started = time.perf_counter()
        gmail.users().messages().list(userId="me", q="report", maxResults=50).execute()
        for msg_id in ids:
            request = (
                gmail.users()
                .messages()
                .get(userId="me", id=msg_id, format="metadata", metadataHeaders=["From", "Subject"])
            )
            google.execute(request, "gmail")
        one_by_one, single_requests = time.perf_counter() - started, fake.http_requests

        started = time.perf_counter()
        for msg_id in ids[:8]:
            read_email(ctx, email_id=msg_id)
        sequential = time.perf_counter() - started
        wrong: list[str] = []

        def read(msg_id: str) -> None:
            text = read_email(ctx, email_id=msg_id)
            if f"Body {int(msg_id[1:])}" not in text:
                wrong.append(msg_id)

        threads = [threading.Thread(target=read, args=(i,)) for i in ids[:8]]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        parallel = time.perf_counter() - started
        deps.close()
    server.shutdown()
    print(f"import co_google.plugin (fresh process): {ms(import_cost())}")
    print(f"first Drive client build (static discovery): {ms(build)}")
    print(
        f"search_drive on local fake, {calls} calls: median {ms(statistics.median(timings))}, "
        f"p95 {ms(sorted(timings)[int(calls * 0.95) - 1])}"
    )
    print(f"with {latency_ms:g} ms per HTTP request:")
    print(
        f"  search_emails(limit=50): {ms(batched)} in {batched_requests} requests; "
        f"one request per email: {ms(one_by_one)} in {single_requests} "
        f"(x{one_by_one / batched:.1f})"
    )
    print(
        f"  8 read_email: parallel threads {ms(parallel)}, one after another {ms(sequential)} "
        f"(x{sequential / parallel:.1f}); wrong answers in parallel: {len(wrong)}"
    )


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[0]) if args else 50, float(args[1]) if len(args) > 1 else 20.0)
