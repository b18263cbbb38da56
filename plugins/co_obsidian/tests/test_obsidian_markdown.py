"""Markdown read as Obsidian reads it, through the tools: every note's tags, the notes a
tag lists, and the sections and blocks read_note returns, on the test vault of
obsidian_testvault (expectations written by hand from Obsidian's rules)."""

from __future__ import annotations

from pathlib import Path

import pytest
from co_obsidian.tools import list_notes, read_note
from obsidian_testvault import NOT_TAGS, NOTES, SECTIONS, TAGS, build, nfc, on_disk
from obsidian_vaults import write
from pydantic_ai import ModelRetry


@pytest.fixture
def testvault(vault: Path) -> Path:
    return build(vault)


def listed(result) -> list[str]:
    return [
        nfc(line[2:].split("  [")[0])
        for line in result.display.splitlines()
        if line.startswith("- ")
    ]


def shown_tags(ctx) -> dict[str, set[str]]:
    """Every note's tags as list_notes shows them, page after page."""
    found: dict[str, set[str]] = {}
    page = 1
    while True:
        result = list_notes(ctx, page=page)
        for line in result.display.splitlines():
            if line.startswith("- "):
                path, _, tags = line[2:].partition("  [")
                found[nfc(path)] = set(tags.removesuffix("]").split(", ")) if tags else set()
        if not result.has_more:
            return found
        page += 1


def test_every_note_has_exactly_the_tags_obsidian_sees(testvault: Path, ctx) -> None:
    expected = {rel: set(TAGS.get(rel, [])) for rel in NOTES}
    shown = shown_tags(ctx)
    for rel in NOTES:  # one note at a time: a failure names the note
        assert shown[rel] == expected[rel], rel
    assert shown == expected


def test_a_tag_lists_the_notes_with_it_or_a_tag_under_it(testvault: Path, ctx) -> None:
    every = {tag for tags in TAGS.values() for tag in tags}
    parents = {tag.rsplit("/", 1)[0] for tag in every if "/" in tag}
    for tag in sorted(every | parents):
        expected = sorted(
            rel
            for rel, tags in TAGS.items()
            if any(t == tag or t.startswith(tag + "/") for t in tags)
        )
        for asked in (tag, "#" + tag, tag.upper()):  # case does not matter, nor a "#"
            assert sorted(listed(list_notes(ctx, tag=asked))) == expected, asked


def test_what_only_looks_like_a_tag_lists_nothing(testvault: Path, ctx) -> None:
    for word in NOT_TAGS:
        assert list_notes(ctx, tag=word).count == 0, word


@pytest.mark.parametrize("typed, note, what, text", SECTIONS)
def test_read_note_returns_the_section_or_block_named(
    testvault: Path, ctx, typed: str, note: str, what: str, text: str
) -> None:
    shown = read_note(ctx, typed)
    header, _, body = shown.partition("\n")
    assert header.startswith(f"[{note}, {what}, lines ")
    assert f"read_note('{note}', whole=True)" in header
    assert body == text


@pytest.mark.parametrize("typed", ["Sections#Usage notes", "[[Sections#^install-step]]"])
def test_the_whole_note_is_one_argument_away(testvault: Path, ctx, typed: str) -> None:
    assert read_note(ctx, typed, whole=True) == NOTES["Syntax/Sections.md"]
    assert read_note(ctx, "Syntax/Sections") == NOTES["Syntax/Sections.md"]


def test_a_missing_heading_or_block_says_what_the_note_has(testvault: Path, ctx) -> None:
    with pytest.raises(ModelRetry, match="no heading 'Nope'.*Step 1: Install.*whole=True"):
        read_note(ctx, "Sections#Nope")
    with pytest.raises(ModelRetry, match=r"no block \^nope.*\^install-step"):
        read_note(ctx, "Sections#^nope")


def test_a_note_named_with_a_hash_is_found_by_its_whole_name(vault: Path, ctx) -> None:
    write(vault, "C# notes.md", "# Intro\nabout C#")
    assert read_note(ctx, "C# notes") == "# Intro\nabout C#"
    assert read_note(ctx, "C# notes#Intro").endswith("\n# Intro\nabout C#\n")


@pytest.mark.parametrize("typed", ["Crème", "crème/", "Cre\u0300me", "CRE\u0300ME"])
def test_a_folder_is_listed_in_either_normal_form(testvault: Path, ctx, typed: str) -> None:
    assert (testvault / on_disk("Crème/Brûlée.md")).exists()  # decomposed on disk
    assert listed(list_notes(ctx, folder=typed)) == ["Crème/Brûlée.md"]


@pytest.mark.parametrize(
    "typed, expected",
    [("Projects/Alpha", "Syntax/Sections.md"), ("q1/q2 REVIEW", "Syntax/Sections.md")],
)
def test_aliases_with_a_slash_open_their_note(
    testvault: Path, ctx, typed: str, expected: str
) -> None:
    assert read_note(ctx, typed) == NOTES[expected]


@pytest.mark.parametrize("bad", ["Home\x00", "a\x00b", "Ho\nme", "\x07bell", "x\x1b[2J"])
def test_control_characters_in_names_are_tool_errors(testvault: Path, ctx, bad: str) -> None:
    from co_obsidian.tools import append_to_note, create_note, note_links, search_notes

    calls = [
        lambda: read_note(ctx, bad),
        lambda: note_links(ctx, bad),
        lambda: create_note(ctx, bad, "text"),
        lambda: append_to_note(ctx, bad, "text"),
        lambda: list_notes(ctx, folder=bad),
        lambda: list_notes(ctx, tag=bad),
    ]
    if "\n" not in bad:  # a line break in a query is only a space
        calls.append(lambda: search_notes(ctx, bad))
    for call in calls:
        with pytest.raises(ModelRetry, match="control character"):
            call()
    assert not any(p.name.startswith(("a", "x")) for p in testvault.iterdir() if p.is_file())


def test_sections_of_notes_with_windows_line_ends_and_odd_breaks(vault: Path, ctx) -> None:
    # \r\n ends a line; a form feed or U+2028 inside a line does not (as the parser counts)
    (vault / "crlf.md").write_bytes(
        "# A\r\nx\u2028y\x0cz\r\n## B\r\nb ^bee\r\n# C\r\nc\r\n".encode()
    )
    assert read_note(ctx, "crlf#A").endswith("\n# A\nx\u2028y\x0cz\n## B\nb ^bee\n")
    assert read_note(ctx, "crlf#A#B").endswith(
        "lines 3–4 of 6; the whole note: read_note('crlf.md', whole=True)]\n## B\nb ^bee\n"
    )
    assert read_note(ctx, "crlf#^bee").endswith("]\nb ^bee\n")
