"""Latency of a trivial command (``echo hi``) through each sandbox backend.

Median (and p90) of many runs; the Docker backend (warm container, docker-py over the
engine socket) is compared with the ``docker exec`` CLI against the same container in
the same run, and each sandbox with its read-only runs (what the read-only preset
allowed; Docker's second container, whose first command starts it, is timed apart). Targets: docker warm <= 80 ms, bubblewrap <= 15 ms.

    uv run python bench/shell_latency.py [--runs 50] [--image co-sandbox-test:4]

Without ``--image`` the locally built test image is used (built on first run).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins/co_shell/tests"))

TARGETS = {"docker": 80.0, "bubblewrap": 15.0}


def measure(fn: Callable[[], object], runs: int) -> list[float]:
    fn()  # warm up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return times


def row(name: str, times: list[float]) -> str:
    times = sorted(times)
    p90 = times[int(len(times) * 0.9) - 1]
    target = TARGETS.get(name)
    median = statistics.median(times)
    verdict = ""
    if target is not None:
        verdict = f"  (target <= {target:g} ms: {'met' if median <= target else 'MISSED'})"
    return f"{name:<24} median {median:7.1f} ms   p90 {p90:7.1f} ms   n={len(times)}{verdict}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--image", default=None)
    args = parser.parse_args()

    from co_shell.sandbox import build
    from co_shell.settings import ShellSettings

    workspace = Path(tempfile.mkdtemp(prefix="co-bench-", dir="/tmp"))
    workspace.chmod(0o755)
    if os.getuid() == 0:
        os.chown(workspace, 1000, 1000)
    load = os.getloadavg()[0]
    print(f"echo hi, {args.runs} runs per backend, {os.cpu_count()} CPUs, load {load:.1f}")
    try:
        for backend in ("none", "bubblewrap", "docker"):
            settings = ShellSettings(sandbox=backend, keep_container=False)
            if backend == "docker":
                import sandbox_image

                settings = ShellSettings(
                    sandbox=backend, keep_container=False, image=args.image or sandbox_image.build()
                )
            try:
                box = build(backend, settings, workspace)
            except Exception as exc:
                print(f"{backend:<24} unavailable: {exc}")
                continue
            try:
                print(row(backend, measure(lambda b=box: b.run(["echo", "hi"]), args.runs)))
                if backend != "none":  # what the read-only preset allowed: read-only mounts
                    start = time.perf_counter()
                    box.run(["echo", "hi"], read_only=True)  # Docker: the reader starts
                    first = (time.perf_counter() - start) * 1000
                    ro = measure(lambda b=box: b.run(["echo", "hi"], read_only=True), args.runs)
                    print(row(f"{backend} read-only", ro) + f"   first {first:.0f} ms")
                if backend == "bubblewrap":  # the floor: bwrap alone, same mounts, no limits
                    raw = box.argv(["echo", "hi"])
                    ids = (
                        {"user": box.uid, "group": box.gid, "extra_groups": []}
                        if os.getuid() == 0
                        else {}
                    )
                    run_raw = lambda c=raw, i=ids: subprocess.run(c, capture_output=True, **i)  # noqa: E731
                    print(row("bwrap alone (no limits)", measure(run_raw, args.runs)))
                if backend == "docker":
                    cid = box.container().id
                    cli = [
                        "docker",
                        "exec",
                        "-u",
                        f"{box.uid}:{box.gid}",
                        "-w",
                        "/workspace",
                        cid,
                        "echo",
                        "hi",
                    ]
                    if shutil.which("docker"):
                        run_cli = lambda c=cli: subprocess.run(c, capture_output=True, check=True)  # noqa: E731
                        print(row("docker exec (CLI)", measure(run_cli, args.runs)))
            finally:
                box.close()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    main()
