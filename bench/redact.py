"""How long masking takes on what Co writes: tool output, JSON-escaped text, keys.

    uv run python bench/redact.py

Masking runs on every string before it reaches the audit trail, traces, sessions and the
REPL history, so its cost is paid for every tool output. Each row is the best of three
over one text: plain multi-line output, JSON with escapes and URL encoding (read decoded
too), base64 (decoded when a run is shorter than 1 MB), one short permission key, and
output full of secrets in every form ``tests/secret_forms.py`` makes.
"""

from __future__ import annotations

import base64
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def best(run: object, times: int = 3) -> float:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        spent.append(time.perf_counter() - start)
    return min(spent)


def main() -> None:
    from secret_forms import cases

    from co_core.kernel.redact import Redactor

    texts = {
        "tool output, lines": "line of output 12345 with some words and /paths/x.txt\n" * 20_000,
        "JSON, escaped": '{"a": "b\\nc", "url": "x%20y", "n": 1} ' * 20_000,
        "base64 blob": base64.b64encode(bytes(range(256)) * 2_000).decode(),
        "permission key": "shell:exec:git status --short",
        "secrets, every form": "\n\n".join(text for _, _, text in cases()),
    }
    print(f"{'text':<22} {'size':>9} {'time':>9} {'MB/s':>7}")
    for name, text in texts.items():
        redactor = Redactor()
        spent = best(lambda t=text, r=redactor: r._text(t))
        size = len(text.encode())
        rate = size / 1e6 / spent if spent else float("inf")
        print(f"{name:<22} {size / 1e3:>7.0f}KB {spent * 1000:>7.1f}ms {rate:>7.1f}")


if __name__ == "__main__":
    sys.exit(main())
