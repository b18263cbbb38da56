"""A search no note fully matches: the notes holding some of its words, or words like
them, are listed apart, and the search still found nothing (count 0)."""

from __future__ import annotations

from pathlib import Path

import pytest
from co_obsidian import scan
from co_obsidian.keys import VAULT
from co_obsidian.nearby import forms, nearby
from co_obsidian.text import parse_query
from co_obsidian.tools import search_notes
from obsidian_vaults import write


def _world(vault: Path) -> None:
    write(vault, "Health/Dentist.md", "# Dentist\n\nDentist appointment on 2031-07-25 at 9:30.\n")
    write(vault, "Projects/Harbor.md", "# Harbor\n\nCodename Quinmivo. Ship the map by spring.\n")
    write(vault, "Home/Wifi.md", "# Wifi\n\nPassword: Lozuka-956\n")
    write(vault, "Private/Quinmivo plans.md", "Quinmivo budget talk.\n")


@pytest.mark.parametrize(
    ("query", "first", "found"),
    [
        ("dentiste", "Health/Dentist.md", "Dentist"),  # French for the English word
        ("Zahnarzt dentists", "Health/Dentist.md", "Dentist"),  # one word in no note, a plural
        ("Codenamen Quinmivo", "Projects/Harbor.md", "Quinmivo"),  # German plural, a name
        ("passwords wifi router", "Home/Wifi.md", "Password"),
    ],
)
def test_notes_with_some_of_the_words_are_offered_apart(
    vault: Path, ctx, query: str, first: str, found: str
) -> None:
    _world(vault)
    result = search_notes(ctx, query)
    assert result.count == 0 and result.data["paths"] == []  # no note holds every word
    assert result.display.startswith(f"No notes match {query!r}. Notes with some of its words")
    assert result.data["near"][0] == first
    assert f"1. {first}" in result.display and f"**{found}**" in result.display


def test_the_note_holding_the_most_words_comes_first_and_nothing_unrelated_is_offered(
    vault: Path, ctx
) -> None:
    _world(vault)
    result = search_notes(ctx, "codename Quinmivo spring zebra")
    assert result.data["near"] == ["Projects/Harbor.md", "Private/Quinmivo plans.md"]
    assert search_notes(ctx, "zebra giraffe").display == "No notes match 'zebra giraffe'."


def test_offered_notes_obey_the_same_filter_as_the_search(vault: Path, ctx) -> None:
    _world(vault)
    index = ctx.deps.resource(VAULT).index()
    query = parse_query("Codenamen Quinmivo")
    allowed = lambda path: not path.startswith("Private/")  # noqa: E731
    assert [n.path for n in nearby(index, query, 10, allowed)] == ["Projects/Harbor.md"]
    if scan.executable() is not None:  # before the index is ready, rg answers alike
        found = index._unindexed(parse_query("Quinmivo"), 0, 10, allowed)
        assert found is not None and [h.path for h in found[0]] == ["Projects/Harbor.md"]


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("dentiste", ["dentiste", "dentist", "dentis", "dentistes", "dentistee"]),
        ("Notizen", ["Notizen", "Notize", "Notiz", "Notizens", "Notizene"]),
        ("map", ["map", "maps", "mape"]),  # too short to lose letters
        ("weekly review", ["weekly review"]),  # a phrase as it is
        ("東京", ["東京"]),
        ("B-204", ["B-204"]),
    ],
)
def test_words_like_a_word_differ_only_in_their_ending(term: str, expected: list[str]) -> None:
    assert forms(term) == expected
