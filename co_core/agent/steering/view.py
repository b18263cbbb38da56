"""A short view of a long tool result: the lines that answer the user's question.

A small model reads a few hundred tokens well and a few thousand badly (and slowly, on a
CPU). When a result is longer than the budget, the model gets its first line (what the
result is) and the lines sharing most words with the user's question, in their order,
with a mark where lines were left out: a question about one setting reads the setting's
line, not the whole file.
"""

from __future__ import annotations

from co_core.agent.tools.bm25 import BM25, query_weights, words

GAP = "[… {n} lines left out]"


def budgeted(text: str, question: str, budget: int) -> str:
    """``text`` if it fits in ``budget`` characters, else the lines that matter most."""
    if len(text) <= budget:
        return text
    lines = text.splitlines()
    if len(lines) <= 1:
        return text[:budget] + " [… cut]"
    index = BM25({str(i): words(line) for i, line in enumerate(lines)})
    scores = index.scores(query_weights((question, 1.0)))
    # the first line, then the best-matching lines, then the rest from the top
    order = [0, *sorted(range(1, len(lines)), key=lambda i: (-scores[str(i)], i))]
    kept: set[int] = set()
    room = budget
    for i in order:
        cost = len(lines[i]) + 1
        if cost > room:
            if scores[str(i)] > 0 and room > 40:  # a long line that matters: its start
                lines[i] = lines[i][: room - 10] + " [… cut]"
                kept.add(i)
            continue
        kept.add(i)
        room -= cost
    out: list[str] = []
    left_out = 0
    for i, line in enumerate(lines):
        if i in kept:
            if left_out:
                out.append(GAP.format(n=left_out))
                left_out = 0
            out.append(line)
        else:
            left_out += 1
    if left_out:
        out.append(GAP.format(n=left_out))
    return "\n".join(out)
