"""A short view of a long tool result: the lines that answer the user's question.

A small model reads a few hundred tokens well and a few thousand badly (and slowly, on a
CPU). When a result is longer than the budget, the model gets its first line (what the
result is) and the lines sharing most words with the user's question, in their order,
with a mark where lines were left out: a question about one setting reads the setting's
line, not the whole file.
"""

from __future__ import annotations

from co_core.agent.tools.bm25 import BM25, query_weights, unaccented, words

GAP = "[… {n} lines left out]"


def budgeted(text: str, question: str, budget: int) -> str:
    """``text`` if it fits in ``budget`` characters, else the lines that matter most."""
    if len(text) <= budget:
        return text
    lines = text.splitlines()
    if len(lines) <= 1:
        return text[:budget] + " [… cut]"
    scores = line_scores(lines, question)
    # the first line, then the best-matching lines, then the rest from the top
    order = [0, *sorted(range(1, len(lines)), key=lambda i: (-scores[i], i))]
    kept: set[int] = set()
    room = budget
    for i in order:
        cost = len(lines[i]) + 1
        if cost > room:
            if scores[i] > 0 and room > 40:  # a long line that matters: its start
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


def line_scores(lines: list[str], question: str) -> list[float]:
    """How well each line matches the question (BM25, accents aside: a French question
    finds the line of an English result that shares its words)."""
    index = BM25({str(i): [unaccented(w) for w in words(line)] for i, line in enumerate(lines)})
    wanted: dict[str, float] = {}
    for word, weight in query_weights((question, 1.0)).items():
        plain = unaccented(word)
        wanted[plain] = max(wanted.get(plain, 0.0), weight)
    scores = index.scores(wanted)
    return [scores[str(i)] for i in range(len(lines))]
