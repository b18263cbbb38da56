"""Latency of a trivial command (``echo hi``) through each sandbox backend, against anchors.

Each backend is measured beside what it is built on, in the same run and interleaved
(one run of each in turn, so the load of a shared machine hits all alike), and beside
its own read-only runs (what the read-only preset allowed; Docker's second container is
started by the warm-up run):

- bubblewrap against bwrap alone (same command line and mounts, no limits, no Co), and
  against itself without the standby (each command's bwrap started and moved into its
  cgroup at run time, as before), with the moves into the cgroup (where Co may make one)
  timed where they happen, and two commands in a row (no gap for the standby to be made
  in) with and without it;
- Docker (warm container, docker-py over the engine socket) against the ``docker exec``
  CLI and docker-py's ``exec_run`` on the same running container.

Budgets (issue 40): Docker <= 0.9x the ``docker exec`` CLI, bubblewrap <= 1.2x bwrap alone.

    uv run python bench/shell_latency.py [--runs 15] [--image co-sandbox-test:4]

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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins/co_shell/tests"))

# backend -> (anchor it is held to, largest ratio allowed)
BUDGETS = {"docker": ("docker exec (CLI)", 0.9), "bubblewrap": ("bwrap alone", 1.2)}


def interleaved(variants: dict[str, Callable[[], object]], runs: int) -> dict[str, list[float]]:
    """Milliseconds of each variant, one run of each in turn (after one warm-up each)."""
    for fn in variants.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, fn in variants.items():
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1000)
    return times


def report(backend: str, times: dict[str, list[float]]) -> None:
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    for name, ts in times.items():
        ordered = sorted(ts)
        p90 = ordered[max(0, int(len(ordered) * 0.9) - 1)]
        line = f"{name:<24} median {medians[name]:7.1f} ms   p90 {p90:7.1f} ms   n={len(ts)}"
        if name != backend and medians[name]:
            line += f"   {backend} = {medians[backend] / medians[name]:.2f}x this"
        print(line)
    anchor, budget = BUDGETS[backend]
    if anchor in medians:
        for name in (backend, f"{backend}, no standby"):
            if name in medians:
                ratio = medians[name] / medians[anchor]
                verdict = "met" if ratio <= budget else "MISSED"
                print(f"  budget: {name} <= {budget:g}x {anchor}: {ratio:.2f}x, {verdict}")
    for name, joins in JOINS.items() if backend == "bubblewrap" else ():
        if joins:
            ordered = sorted(joins)
            p90 = ordered[max(0, int(len(ordered) * 0.9) - 1)]
            print(
                f"  {name}: joining the cgroup (the kernel's move) "
                f"median {statistics.median(joins):.1f} ms, p90 {p90:.1f} ms"
            )


# milliseconds each bubblewrap command spent joining its cgroup, by where it happens
JOINS: dict[str, list[float]] = {}


def time_joins(box: Any, where: str) -> None:
    """Time the box's cgroup joins where they happen (Co moves each command's bwrap into
    its cgroup; on cgroup v1 the kernel makes that move wait for an RCU grace period)."""
    cgroup = box._group()
    if cgroup is None:
        return
    join = cgroup.join
    times = JOINS.setdefault(where, [])

    def timed(pid: int | None = None) -> None:
        start = time.perf_counter()
        try:
            join(pid)
        finally:
            times.append((time.perf_counter() - start) * 1000)

    cgroup.join = timed


def bubblewrap_variants(box: Any) -> dict[str, Callable[[], object]]:
    raw = box.argv(["echo", "hi"])  # the floor: bwrap alone, same mounts, no limits
    time_joins(box, "with the standby, made after each command (off its path)")
    ids = {"user": box.uid, "group": box.gid, "extra_groups": []} if os.getuid() == 0 else {}
    # as before the standby: each command's bwrap started, and moved into its cgroup, at run time
    at_run = type(box)(box.settings, box.workspace)
    at_run.ahead = False
    CLOSE.append(at_run.close)
    time_joins(at_run, "no standby (on the command's path; bwrap sets up meanwhile)")
    return {
        "bubblewrap": lambda: box.run(["echo", "hi"]),
        "bubblewrap read-only": lambda: box.run(["echo", "hi"], read_only=True),
        "bubblewrap, no standby": lambda: at_run.run(["echo", "hi"]),
        "bwrap alone": lambda: subprocess.run(raw, capture_output=True, check=True, **ids),
        # two commands with no gap: the second waits for the standby still being made
        "bubblewrap, 2 in a row": lambda: [box.run(["echo", "hi"]) for _ in range(2)],
        "no standby, 2 in a row": lambda: [at_run.run(["echo", "hi"]) for _ in range(2)],
    }


CLOSE: list[Callable[[], None]] = []  # what the bench made beside the boxes, closed with them


def docker_variants(box: Any) -> dict[str, Callable[[], object]]:
    container = box.container()
    user = f"{box.uid}:{box.gid}"
    variants: dict[str, Callable[[], object]] = {
        "docker": lambda: box.run(["echo", "hi"]),
        "docker read-only": lambda: box.run(["echo", "hi"], read_only=True),
    }
    if shutil.which("docker"):
        cli = ["docker", "exec", "-u", user, "-w", "/workspace", container.id, "echo", "hi"]
        variants["docker exec (CLI)"] = lambda: subprocess.run(cli, capture_output=True, check=True)
    variants["docker-py exec_run"] = lambda: container.exec_run(
        ["echo", "hi"], user=user, workdir="/workspace"
    )
    return variants


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--image", default=None)
    args = parser.parse_args()

    from co_shell.sandbox import build
    from co_shell.settings import ShellSettings

    workspace = Path(tempfile.mkdtemp(prefix="co-bench-", dir="/tmp"))
    workspace.chmod(0o755)
    if os.getuid() == 0:
        os.chown(workspace, 1000, 1000)
    load = os.getloadavg()[0]
    print(f"echo hi, {args.runs} runs of each, interleaved, {os.cpu_count()} CPUs, load {load:.1f}")
    try:
        for backend in ("bubblewrap", "docker"):
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
                variants = (bubblewrap_variants if backend == "bubblewrap" else docker_variants)(
                    box
                )
                report(backend, interleaved(variants, args.runs))
            finally:
                box.close()
                while CLOSE:
                    CLOSE.pop()()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    main()
