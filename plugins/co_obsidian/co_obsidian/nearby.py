"""What to offer when no note holds every word of a search.

A search finds the notes holding all its words, as written (see docs/obsidian.md). When
there are none, the words may be in another form than the notes' ("dentiste" for a note
saying "dentist", "Codenamen" for "Codename"), or one word may be in no note at all
("Codenamen Quinmivo"). Then the search also lists the notes holding *some* of the
words, or a word like one of them, those holding the most first: an empty answer would
leave the user (or a small model) with nothing to go on.

A word like another is the same word with one or two letters less at its end, or one
more ("s", "e"): the endings of plurals and inflections in the languages Co reads, with
at least ``MIN_STEM`` letters left. Phrases and words of scripts written without spaces
are taken only as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from co_obsidian import text as T
from co_obsidian.index import VaultIndex

MIN_STEM = 4
PER_FORM = 50  # notes read for each form of a word
ENDINGS = ("s", "e")


def forms(term: str) -> list[str]:
    """``term`` and the words like it: "dentiste" -> dentiste, dentist, dentis, ..."""
    if " " in term or not term.isalpha() or T.SPACELESS.search(term):
        return [term]
    shorter = [term[:-k] for k in (1, 2) if len(term) - k >= MIN_STEM]
    return list(dict.fromkeys([term, *shorter, *(term + end for end in ENDINGS)]))


@dataclass
class Near:
    """A note holding some of the words: which of the query's terms, as which forms."""

    path: str
    text: str
    terms: set[int]
    found: list[str]


def nearby(
    index: VaultIndex, query: T.Query, limit: int, allowed: Callable[[str], bool] | None
) -> list[Near]:
    """The notes holding the most of ``query``'s terms (each in one of its forms), best
    first; at most ``limit``."""
    notes: dict[str, Near] = {}
    for number, term in enumerate(query.terms):
        for form in forms(term):
            hits, _ = index.search(T.Query(form, (form,)), 0, PER_FORM, allowed)
            for hit in hits:
                near = notes.setdefault(hit.path, Near(hit.path, hit.text, set(), []))
                near.terms.add(number)
                if form not in near.found:
                    near.found.append(form)
    ranked = sorted(notes.values(), key=lambda n: -len(n.terms))  # stable: search order
    return ranked[:limit]
