"""Search in every script of the test vault: folding, words without spaces, ranking and
snippets, the same with the index and with ripgrep while it builds."""

from __future__ import annotations

from pathlib import Path

import pytest
from co_obsidian import scan
from co_obsidian.keys import VAULT
from co_obsidian.tools import search_notes
from obsidian_testvault import build, nfc
from obsidian_vaults import indexed, write

from co_core import ToolResult


def paths(result: ToolResult) -> list[str]:
    return [nfc(p) for p in result.data.get("paths", [])]


SCRIPT_QUERIES = {
    # Greek: accents (tonos) optional, final sigma is sigma
    "σημειωσεις": ["Home.md", "Syntax/Sections.md", "Ελληνικά/Σημειώσεις.md"],
    "ΣΗΜΕΙΩΣΕΙΣ": ["Home.md", "Syntax/Sections.md", "Ελληνικά/Σημειώσεις.md"],
    "ταξιδι": ["Ελληνικά/Σημειώσεις.md"],
    "ταξίδι": ["Ελληνικά/Σημειώσεις.md"],
    # Russian: ё and е are one letter in a search
    "елка": ["Русский/Ёлка.md"],
    "ёлка": ["Русский/Ёлка.md"],
    "новогодняя": ["Русский/Ёлка.md"],
    # Japanese: the iteration mark inside a word, words inside runs
    "様々": ["日本語/様々なメモ.md"],
    "々な": ["日本語/様々なメモ.md"],
    "東京": ["日本語/様々なメモ.md"],
    # scripts without spaces: found inside running text
    "ตลาด": ["ไทย/บันทึก.md"],
    "สวัสดี": ["ไทย/บันทึก.md"],
    "ภาสา": [],  # not in the text
    "ភាសា": ["Khmer/កំណត់ត្រា.md"],
    "ສະບາຍ": ["Lao/ບັນທຶກ.md"],
    "မင်္ဂလာ": ["Burmese/မှတ်စု.md"],
    # Latin accents optional, but a letter of its own stays one
    "cafe": ["Café.md", "Home.md", "Résumé.md"],
    "credits": ["Crèdits.md", "Home.md", "Thèmes.md"],
    "interpretowanie stron": ["Polski/Interpretowanie.md"],
    "przegladarka": ["Polski/Interpretowanie.md"],
}


@pytest.mark.parametrize("rg", ["index", "ripgrep"])
def test_every_script_is_found_as_documented(vault: Path, ctx, rg: str) -> None:
    build(vault)
    index = ctx.deps.resource(VAULT).index()
    for query, expected in SCRIPT_QUERIES.items():
        if rg == "index":
            found = paths(search_notes(ctx, query, limit=50))
        else:
            if scan.executable() is None:
                pytest.skip("rg is not installed")
            from co_obsidian.text import parse_query

            hits, _more = index._unindexed(parse_query(query), 0, 50, None)
            found = [nfc(h.path) for h in hits]
        assert sorted(found) == sorted(expected), query


def test_a_note_titled_as_the_query_comes_first_even_when_long(vault: Path, ctx) -> None:
    filler = "Some words about the weather and the kitchen. " * 400
    write(vault, "Garden tips.md", f"# Intro\n{filler}\nA few garden tips at the end.")
    for i in range(5):
        write(
            vault,
            f"Garden tips for spring {i}.md",
            "## Garden tips\nGarden tips, garden tips and more garden tips.",
        )
    assert paths(search_notes(ctx, "garden tips"))[0] == "Garden tips.md"
    assert paths(search_notes(ctx, '"garden tips"'))[0] == "Garden tips.md"
    assert paths(search_notes(ctx, "GARDEN TIPS"))[0] == "Garden tips.md"


def test_a_note_whose_alias_is_the_query_comes_first(vault: Path, ctx) -> None:
    filler = "Unrelated text about cooking. " * 400
    write(vault, "Robert.md", f"---\naliases: [Bob the Builder]\n---\n{filler} bob the builder")
    for i in range(3):
        write(vault, f"n{i}.md", "# Bob the builder\nbob the builder, bob the builder")
    indexed(ctx)
    assert paths(search_notes(ctx, "bob the builder"))[0] == "Robert.md"


def test_a_note_named_as_the_query_comes_before_notes_with_it_as_an_alias(vault: Path, ctx) -> None:
    for rel in ("a/Board.md", "b/Whiteboard.md", "c/Pinboard.md"):
        write(vault, rel, "---\naliases: [Canvas]\n---\nA canvas of ideas.")
    write(vault, "drawings/2024/Canvas.md", "# Canvas\nThe canvas itself.")
    write(vault, "Malerei/Leinwand.md", "---\ntitle: Canvas\n---\nCanvas auf Deutsch.")
    indexed(ctx)
    found = paths(search_notes(ctx, "canvas"))
    assert found[:2] == ["drawings/2024/Canvas.md", "Malerei/Leinwand.md"]  # name, title:
    assert sorted(found[2:5]) == ["a/Board.md", "b/Whiteboard.md", "c/Pinboard.md"]


def test_snippet_bold_marks_only_the_matches(vault: Path, ctx) -> None:
    write(vault, "a.md", "**Budget** review is **done**, and *review* again ***today***.")
    display = search_notes(ctx, "review").display
    line = display.splitlines()[2]
    assert line.strip() == "Budget **review** is done, and **review** again today."
    assert line.count("**") == 4


def test_nfd_file_names_are_found_by_nfc_queries(vault: Path, ctx) -> None:
    import unicodedata

    write(vault, unicodedata.normalize("NFD", "Réunion.md"), "espresso")
    assert paths(search_notes(ctx, "réunion")) == ["Réunion.md"]
    assert paths(search_notes(ctx, "reunion espresso")) == ["Réunion.md"]


def test_letters_of_their_own_are_not_folded(vault: Path, ctx) -> None:
    write(vault, "pl.md", "Łódź")
    write(vault, "ru.md", "мой дом")
    write(vault, "de.md", "Die Straße")
    assert paths(search_notes(ctx, "łodz")) == ["pl.md"]
    assert paths(search_notes(ctx, "lodz")) == []
    assert paths(search_notes(ctx, "мои")) == []  # й is not и
    assert paths(search_notes(ctx, "мой")) == ["ru.md"]
    assert paths(search_notes(ctx, "strasse")) == []
