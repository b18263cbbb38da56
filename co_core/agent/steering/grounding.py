"""Is a small model's answer drawn from the tool's result? If not, Co shows the result.

A model of a hundred million parameters, given "Password: Lozuka-956" and asked for the
wifi password, may answer with something else entirely. Co checks the answer against the
result line that best matches the question: the answer must repeat one of that line's
telling words (a word with a digit, or of five letters or more, that the question did not
already contain). When it does not, Co answers with the lines of the result that match
the question (co_core.agent.steering.view), which is what a user would have looked for.
"""

from __future__ import annotations

import re

from co_core.agent.steering.view import budgeted, line_scores

EXCERPT_CHARS = 600  # Co's own answer from a result: the lines that matter, not a dump
_TOKEN = re.compile(r"[\w][\w.@:/+-]*[\w]|\w", re.UNICODE)


def _tokens(text: str) -> set[str]:
    return {t.lower().strip(".:") for t in _TOKEN.findall(text)}


def telling(token: str) -> bool:
    return any(c.isdigit() for c in token) or len(token) >= 5


def best_line(result: str, question: str, about: str | None = None) -> str:
    """The result's line that matches ``about`` best (what the question asks of the
    result), or the whole question when ``about`` matches no line; the first line on a
    tie."""
    lines = [line for line in result.splitlines() if line.strip()]
    if not lines:
        return ""
    scores = line_scores(lines, about) if about else []
    if not any(scores):
        scores = line_scores(lines, question)
    best = max(range(len(lines)), key=lambda i: (scores[i], -i))
    return lines[best]


def grounded(answer: str, results: list[str], question: str, about: str | None = None) -> bool:
    """Does ``answer`` repeat something telling, that the question did not say, of the
    results' lines that best match ``about`` (what the question asks of them: by
    default, the question)?"""
    asked = _tokens(question)
    said = _tokens(answer)
    wanted: set[str] = set()
    for result in results:
        line = best_line(result, question, about)
        wanted |= {t for t in _tokens(line) if telling(t) and t not in asked}
    return not wanted or bool(wanted & said)


def excerpt(results: list[str], question: str) -> str:
    """Co's answer from the results: the lines that match the question."""
    return "\n\n".join(budgeted(r.strip(), question, EXCERPT_CHARS) for r in results if r.strip())
