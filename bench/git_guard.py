"""What guarding git's reach costs per sandboxed command, against the command itself.

Builds workspaces of growing size (folders x files, with a nested repository and a
husky-style hooks folder), then times, per command: ``protect.hold`` (find what git would
run from, read configs) and ``protect.refuse_new`` (look for what a command made), each
warm (what every command after the first pays), next to a bubblewrap ``echo hi`` in the
same workspace. Ratios within one run are what to read.

    uv run python bench/git_guard.py [--runs 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins/co_shell/tests"))

SIZES = [(50, 10), (500, 10), (3000, 10)]  # folders, files per folder


def build(folders: int, files: int) -> Path:
    from shell_testlib import make_workspace

    root = make_workspace()  # one the sandbox's user can enter (uid 1000 under root)
    git = ["git", "-c", "init.defaultBranch=main", "-c", "safe.directory=*"]
    subprocess.run([*git, "init", "-q", str(root)], check=True)
    subprocess.run([*git, "-C", str(root), "config", "core.hooksPath", ".husky/_"], check=True)
    (root / ".husky" / "_").mkdir(parents=True)
    (root / ".husky" / "_" / "pre-commit").write_text("#!/bin/sh\n. .husky/pre-commit\n")
    subprocess.run([*git, "init", "-q", str(root / "vendor" / "lib")], check=True)
    for i in range(folders):
        folder = root / "src" / f"d{i // 50}" / f"m{i}"
        folder.mkdir(parents=True, exist_ok=True)
        for j in range(files):
            (folder / f"f{j}.py").write_text("x = 1\n")
    from shell_testlib import chown_tree

    chown_tree(root)
    return root


def median_ms(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    fn()  # warm: caches filled, as for every command after the first
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    from co_shell.sandbox import protect
    from shell_testlib import sandbox_for

    for folders, files in SIZES:
        root = build(folders, files)
        time.sleep(2.5)  # a folder changed in the last 2 s is always read again (coarse times)
        try:
            held = protect.hold(root)
            hold = median_ms(lambda r=root: protect.hold(r), args.runs)
            after = median_ms(lambda r=root, h=held: protect.refuse_new(r, h), args.runs)
            box = sandbox_for("bubblewrap", root)
            try:
                echo = median_ms(lambda b=box: b.run(["bash", "-c", "echo hi"]), args.runs)
            finally:
                box.close()
            protect.release(root)
            print(
                f"{folders:>5} folders x {files} files: hold {hold:6.1f} ms, "
                f"after {after:6.1f} ms, bubblewrap echo (both included) {echo:6.1f} ms; "
                f"guard share {(hold + after) / echo:5.0%}; protected {len(held.names)} paths"
            )
        finally:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
