"""co-shell's ``search_files`` against ripgrep on the same workspace, in one run.

    uv run python bench/search_files.py            # 1,000 and 5,000 files of ~2 KB

``search_files`` reads every file on the host (no index: a workspace changes under
commands and editors), so its cost grows with the workspace. Each row times it for a word
in one file and for a word in every file, against ``rg -l -i`` for the same word (the
least rg has to do), best of three, and prints the ratio. The tool stops reading at 5,000
files (``MAX_FILES``) and says so.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from co_core.testing import make_deps

WORDS = "alpha beta gamma delta report budget meeting notes server config value".split()


def build(root: Path, files: int, rng: random.Random) -> None:
    for i in range(files):
        folder = root / f"d{i % 50:02d}"
        folder.mkdir(exist_ok=True)
        lines = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(25)]
        if i == files // 2:
            lines[7] += " zanzibar invoice"
        (folder / f"f{i:05d}.txt").write_text("\n".join(lines) + "\n")


def best(run: object, times: int = 3) -> float:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        spent.append(time.perf_counter() - start)
    return min(spent)


def main() -> None:
    from co_shell.file_search import search_files

    rg = shutil.which("rg")
    if rg is None:
        sys.exit("rg (ripgrep) is needed for the comparison")
    print(f"{'files':>6} {'query':<18} {'search_files':>13} {'rg -l':>8} {'ratio':>6}")
    for files in (1_000, 5_000):
        root = Path(tempfile.mkdtemp(prefix="co-search-bench-"))
        try:
            build(root, files, random.Random(files))
            deps = make_deps({}, workspace=root)
            ctx = SimpleNamespace(deps=deps)
            for query in ("zanzibar invoice", "budget"):
                ours = best(lambda q=query, c=ctx: search_files(c, q))
                word = query.split()[0]
                command = [rg, "-l", "-i", word, str(root)]
                theirs = best(lambda c=command: subprocess.run(c, capture_output=True))
                print(
                    f"{files:>6} {query:<18} {ours * 1000:>10.0f} ms {theirs * 1000:>5.0f} ms"
                    f" {ours / theirs:>6.1f}"
                )
            deps.close()
        finally:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
