"""How long reading a GGUF file's header takes: Co's reader against llama.cpp's ``gguf``
package (``GGUFReader``), on the built-in SmolLM2 (49,152 tokens) and on a generated
header with Qwen2.5's vocabulary size (151,936 tokens and as many merges, no weights).

    uv run python bench/gguf_header.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from co_core.agent.local import catalog, gguf  # noqa: E402


def qwen_sized_header(path: Path) -> Path:
    import gguf as gg
    import numpy as np

    writer = gg.GGUFWriter(path, "qwen2")
    writer.add_context_length(32768)
    writer.add_token_list([f"tok{i}" for i in range(151_936)])
    writer.add_token_merges([f"a{i} b{i}" for i in range(151_387)])
    writer.add_chat_template("{% for m in messages %}<tool_call>{% endfor %}")
    writer.add_tensor("w", np.zeros((4,), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def timed(work: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        work()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    import gguf as gg

    files = {}
    built_in = catalog.built_in()
    if built_in is not None:
        files["SmolLM2-135M (49k tokens)"] = built_in
    with tempfile.TemporaryDirectory() as folder:
        files["Qwen2.5-sized header (152k tokens)"] = qwen_sized_header(Path(folder) / "q.gguf")
        print(f"{'file':<38}{'Co':>10}{'GGUFReader':>14}{'ratio':>8}")
        for label, path in files.items():
            ours = timed(lambda p=path: gguf.read(p), 10)
            theirs = timed(lambda p=path: gg.GGUFReader(p), 2)
            print(f"{label:<38}{ours * 1000:>8.1f}ms{theirs * 1000:>12.0f}ms{theirs / ours:>7.0f}x")


if __name__ == "__main__":
    main()
