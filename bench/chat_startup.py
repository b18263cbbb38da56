"""Time to an interactive ``co chat`` prompt, in a real pty, versus importing pydantic-ai.

Settings, rich and the agent (pydantic-ai, plugins' tools) are all dealt with in a
background thread once the prompt is drawn, so the prompt should appear well before
pydantic-ai has even been imported.

Python writes bytecode caches (``__pycache__``) unless told not to, and installs compile
them; ``PYTHONDONTWRITEBYTECODE`` (set on some CI machines) would make every run compile
400 modules from source, which is not what a user sees, so it is removed for the runs.
Run: ``uv run python bench/chat_startup.py``
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pexpect

HERE = Path(__file__).resolve().parent
CO = str(Path(sys.executable).parent / "co")
RUNS = 7


def env() -> dict[str, str]:
    e = dict(os.environ)
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    for kind in ("CONFIG", "DATA", "CACHE"):
        e[f"CO_{kind}_DIR"] = tempfile.mkdtemp(prefix=f"co-bench-{kind.lower()}-")
    e["PYTHONPATH"] = str(HERE.parent / "tests" / "fixture_plugin")
    return e


def time_to_prompt(environment: dict[str, str]) -> float:
    start = time.perf_counter()
    child = pexpect.spawn(CO, ["chat", "-m", "function:co_scripts:chat"], env=environment,
                          encoding="utf-8", timeout=60, dimensions=(40, 120))  # fmt: skip
    child.expect("co>")
    elapsed = time.perf_counter() - start
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    return elapsed


def time_import(module: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True, env=env())
    return time.perf_counter() - start


def main() -> None:
    environment = env()
    time_to_prompt(environment)  # warm the file cache
    prompts = [time_to_prompt(environment) for _ in range(RUNS)]
    imports = [time_import("pydantic_ai") for _ in range(3)]
    bare = [time_import("co_core") for _ in range(3)]
    print(f"co chat: time to interactive prompt, median of {RUNS}: {statistics.median(prompts):.3f} s "
          f"(min {min(prompts):.3f}, max {max(prompts):.3f})")  # fmt: skip
    print(f"python -c 'import pydantic_ai' (for scale), median: {statistics.median(imports):.3f} s")
    print(
        f"python -c 'import co_core' (interpreter start), median: {statistics.median(bare):.3f} s"
    )
    print("target: prompt < 0.4 s")


if __name__ == "__main__":
    main()
