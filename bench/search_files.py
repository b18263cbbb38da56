"""co-shell's ``search_files`` against ripgrep on the same workspace, in one run.

    uv run python bench/search_files.py            # 1,000 and 5,000 files of ~2 KB

``search_files`` reads every file on the host (no index: a workspace changes under
commands and editors), so its cost grows with the workspace. Each row times it for a word
in one file and for a word in every file, against ``rg -l -i`` for the same word (the
least rg has to do), best of three, and prints the ratio. The tool stops reading at 5,000
files (``MAX_FILES``), 64 MB or 10 s and says so. The last rows are one 400 KB file
searched for the most words a query may have (``MAX_TERMS``), and for 2,000 words (once
35 s; now refused at once, naming the limit).
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
    big_file()


def big_file() -> None:
    from co_shell.file_search import MAX_TERMS, search_files
    from pydantic_ai import ModelRetry

    root = Path(tempfile.mkdtemp(prefix="co-search-bench-"))
    try:
        rng = random.Random(400)
        lines = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(5_500)]
        (root / "big.txt").write_text("\n".join(lines) + "\n")
        size = (root / "big.txt").stat().st_size
        deps = make_deps({}, workspace=root)
        ctx = SimpleNamespace(deps=deps)
        for count in (MAX_TERMS, 2_000):
            query = " ".join(f"{rng.choice(WORDS)}{i}" for i in range(count))

            def run(q: str = query) -> None:
                try:
                    search_files(ctx, q)
                except ModelRetry:
                    pass  # refused: more words than a query may have

            print(f"1 file of {size // 1000} KB, {count:,} words: {best(run) * 1000:.0f} ms")
        deps.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
