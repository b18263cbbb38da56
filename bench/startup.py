"""How long `co --help` takes, against `python -c pass`, in one run (the machine is noisy).

Run: uv run python bench/startup.py [-n 20]
Target (issue 2): `co --help` under 0.25 s with all four plugins installed.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def median_seconds(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=20)
    args = parser.parse_args()
    co = shutil.which("co") or sys.exit(
        "`co` is not on PATH; run with `uv run python bench/startup.py`"
    )
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "co --version": [co, "--version"],
        "co --help": [co, "--help"],
        "co plugins": [co, "plugins"],
    }
    for argv in cases.values():  # warm the file cache once
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Interleave rounds so background load hits every case alike.
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, argv in cases.items():
            samples[name].append(median_seconds(argv, 1))
    base = statistics.median(samples["python -c pass"])
    print(f"{'command':<16} {'median':>9} {'vs python':>10}   ({args.runs} runs each)")
    for name, values in samples.items():
        value = statistics.median(values)
        print(f"{name:<16} {value * 1000:7.1f} ms {value / base:9.1f}x")


if __name__ == "__main__":
    main()
