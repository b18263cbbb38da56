"""Is a small model's answer drawn from the tool's result? If not, Co shows the result.

A model of a hundred million parameters, given "Password: Lozuka-956" and asked for the
wifi password, may answer with something else entirely. Co checks the answer against the
result line that best matches the question: the answer must repeat one of that line's
telling words (a word with a digit, or of five letters or more, that the question did not
already contain). When it does not, Co answers with the lines of the result that match
the question (co_core.agent.local.view), which is what a user would have looked for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from co_core.agent.local.view import budgeted, line_scores

EXCERPT_CHARS = 600  # Co's own answer from a result: the lines that matter, not a dump
_TOKEN = re.compile(r"[\w][\w.@:/+-]*[\w]|\w", re.UNICODE)


def _tokens(text: str) -> set[str]:
    return {t.lower().strip(".:") for t in _TOKEN.findall(text)}


def telling(token: str) -> bool:
    return any(c.isdigit() for c in token) or len(token) >= 5


def best_line(
    result: str, question: str, about: Sequence[str] = (), carried: Sequence[str] = ()
) -> str:
    """The result's line that matches best the first of ``about`` that matches any (what
    the question asks of the result, most narrowly first), else the question; the first
    line on a tie. A line is scored without the values the call ``carried``: "Notes
    matching 'wifi password'" repeats the search, it does not answer it."""
    lines = [line for line in result.splitlines() if line.strip()]
    if not lines:
        return ""
    plain = [_without(line, carried) for line in lines]
    scores: list[float] = []
    for look in [*about, question]:
        scores = line_scores(plain, look)
        if any(scores):
            break
    best = max(range(len(lines)), key=lambda i: (scores[i], -i))
    return lines[best]


def _without(line: str, values: Sequence[str]) -> str:
    for value in values:
        line = re.sub(re.escape(value), " ", line, flags=re.IGNORECASE)
    return line


def grounded(
    answer: str,
    results: list[str],
    question: str,
    about: Sequence[str] = (),
    carried: Sequence[str] = (),
) -> bool:
    """Does ``answer`` repeat something telling, that the question did not say, of the
    results' lines that best answer the question (see :func:`best_line`)?"""
    asked = _tokens(question)
    said = _tokens(answer)
    wanted: set[str] = set()
    for result in results:
        line = best_line(result, question, about, carried)
        wanted |= {t for t in _tokens(line) if telling(t) and t not in asked}
    return not wanted or bool(wanted & said)


def excerpt(results: list[str], question: str) -> str:
    """Co's answer from the results: the lines that match the question."""
    return "\n\n".join(budgeted(r.strip(), question, EXCERPT_CHARS) for r in results if r.strip())
