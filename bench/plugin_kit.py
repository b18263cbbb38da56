"""What the plugin kit costs: `co plugin new`, and `co plugins` with many third-party plugins.

Run: uv run python bench/plugin_kit.py [-n 10] [--plugins 20]
`co plugins` is timed with N fake plugins (real entry points on PYTHONPATH), each declaring
CO_HOOKSPEC_VERSION and a `co-core>=0.1` requirement (both checked at load), against the
same plugins without either; the difference is the compatibility checks' cost.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from co_core.testing import install_fake_plugin

SOURCE = """
from co_core import hookimpl
{version}

@hookimpl
def register_tools(register):
    register("os.path:basename", risk="read", name="base_{name}")
"""


def median_seconds(argv: list[str], runs: int, env: dict[str, str], cwd: Path) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, env=env, cwd=cwd, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=10)
    parser.add_argument("--plugins", type=int, default=20)
    args = parser.parse_args()
    co = [sys.executable, "-m", "co_core"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {**os.environ, "CO_CONFIG_DIR": str(root / "c"), "CO_DATA_DIR": str(root / "d")}
        gen = [
            median_seconds([*co, "plugin", "new", f"bench{n}"], 1, env, root)
            for n in range(args.runs)
        ]
        print(f"co plugin new: median {statistics.median(gen) * 1000:.1f} ms")
        for label, checked in (("plain", False), ("checked", True)):
            site = root / f"site-{label}"
            for i in range(args.plugins):
                version = "CO_HOOKSPEC_VERSION = 1" if checked else ""
                install_fake_plugin(
                    site,
                    f"p{i}",
                    SOURCE.format(version=version, name=i),
                    requires=["co-core>=0.1"] if checked else (),
                )
            run_env = {
                **env,
                "PYTHONPATH": str(site),
                "CO_LOAD_PLUGINS": ",".join(f"p{i}" for i in range(args.plugins)),
            }
            took = median_seconds([*co, "plugins", "--json"], args.runs, run_env, root)
            print(f"co plugins, {args.plugins} plugins, {label}: median {took * 1000:.1f} ms")


if __name__ == "__main__":
    main()
