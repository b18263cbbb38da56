"""What drawing a streamed answer costs: Co's answer view against plain rich Markdown.

An answer of prose, a quoted 81-line file and a fenced block (about 2 KB) streams in
6-character pieces, as ``co chat`` receives it, into a live region redrawn every 40
pieces; the tool output it quotes is known (``Outputs``). "Markdown" builds a rich
``Markdown`` for every piece (what the REPL did before); "Co" keeps the text and lays it
out when the region is redrawn (``TurnView.__rich__``). Both draw to an in-memory
terminal at every redraw and at the end. Run: ``uv run python bench/answer_render.py``;
prints the median time of one whole answer for each side and their ratio (same run,
alternating rounds).
"""

from __future__ import annotations

import io
import statistics
import time

from rich.console import Console
from rich.markdown import Markdown

from co_core.ui.answer import Outputs, renderable

ROUNDS = 15
PIECE = 6
REDRAW_EVERY = 40  # pieces between redraws: ~12 redraws a second at a fast model's pace

FILE = "\n".join(
    f"def handler_{i}(request):\n    return __dispatch__(request, 'route_{i}')\n" for i in range(27)
)
ANSWER = (
    "Here is what `report.py` holds, as the tool returned it:\n\n"
    + FILE
    + "\n\nIt defines **twenty** handlers; each one calls `__dispatch__`.\n"
    "The next step would be to test them:\n\n```python\nimport pytest\n\n"
    "def test_handlers():\n    assert handler_1(None)\n```\n\nShall I write the tests?\n"
)


def stream(build: object, lazy: bool) -> float:
    """Stream the answer; ``build(text)`` for every piece, or only at redraws if lazy."""
    console = Console(file=io.StringIO(), width=100, force_terminal=True)
    started = time.perf_counter()
    text = ""
    for index in range(0, len(ANSWER), PIECE):
        text += ANSWER[index : index + PIECE]
        redraw = (index // PIECE) % REDRAW_EVERY == 0
        if not lazy or redraw:
            shown = build(text)  # type: ignore[operator]
        if redraw:
            console.print(shown)
    console.print(build(text))  # type: ignore[operator]
    return time.perf_counter() - started


def main() -> None:
    outputs = Outputs()
    outputs.add(FILE)
    co = []
    plain = []
    for _ in range(ROUNDS):
        co.append(stream(lambda text: renderable(text, outputs), lazy=True))
        plain.append(stream(Markdown, lazy=False))
    co_ms, plain_ms = statistics.median(co) * 1000, statistics.median(plain) * 1000
    print(f"answer of {len(ANSWER):,} characters in {len(ANSWER) // PIECE} pieces")
    print(f"Co's answer view: {co_ms:.1f} ms   rich Markdown: {plain_ms:.1f} ms")
    print(f"ratio: {co_ms / plain_ms:.2f}x")


if __name__ == "__main__":
    main()
