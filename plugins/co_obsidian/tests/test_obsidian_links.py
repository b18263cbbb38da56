"""Links, backlinks and names resolved as Obsidian resolves them, on the test vault of
obsidian_testvault (expectations written by hand from Obsidian's rules)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from co_obsidian.keys import VAULT
from co_obsidian.links import resolve_note
from co_obsidian.tools import append_to_note, create_note, note_links, read_note
from obsidian_testvault import BACKLINKS, LINKS, NOTES, build, nfc
from obsidian_vaults import write
from pydantic_ai import ModelRetry

_LINE = re.compile(r"- (.*) → (.*?)(?: \((attachment|embed)\))?$")


@pytest.fixture
def testvault(vault: Path) -> Path:
    return build(vault)


def shown_links(display: str) -> tuple[list[tuple[str, str | None]], list[str]]:
    """(links, backlinks) as note_links shows them, in NFC."""
    links: list[tuple[str, str | None]] = []
    back: list[str] = []
    section = None
    for line in display.splitlines():
        if line.startswith("Links from "):
            section = links
        elif line.startswith("Backlinks to "):
            section = back
        elif line == "- none":
            continue
        elif section is links:
            m = _LINE.fullmatch(line)
            assert m, line
            target = None if m.group(2) == "(no such note yet)" else nfc(m.group(2))
            links.append((nfc(m.group(1)), target))
        elif section is back:
            back.append(nfc(line[2:]))
    return links, back


def test_every_link_and_backlink_resolves_as_in_obsidian(testvault: Path, ctx) -> None:
    assert set(LINKS) == set(BACKLINKS) == set(NOTES)
    for rel in NOTES:
        links, back = shown_links(note_links(ctx, rel).display)
        assert links == [(nfc(raw), target) for raw, target in LINKS[rel]], rel
        assert back == BACKLINKS[rel], rel


def test_attachments_and_embeds_are_not_missing_notes(testvault: Path, ctx) -> None:
    result = note_links(ctx, "Home")
    assert "- ![[diagram.png]] → assets/diagram.png (attachment)" in result.display
    assert "- ![[Status]] → Projects/Status.md (embed)" in result.display
    assert "- ![[missing.png]] → (no such note yet)" in result.display
    assert result.data["attachments"] == [
        "assets/diagram.png",
        "assets/Report.pdf",
        "assets/logo.svg",
        "Board.canvas",
    ]
    assert "Projects/Status.md" in result.data["outgoing"]


def test_table_links_lose_the_tables_backslash(vault: Path, ctx) -> None:
    write(vault, "Target Note.md", "here")
    write(vault, "Table.md", "| a | b |\n|---|---|\n| x | [[Target Note\\|shown]] |\n")
    links, _ = shown_links(note_links(ctx, "Table").display)
    assert links == [("[[Target Note\\|shown]]", "Target Note.md")]
    assert note_links(ctx, "Target Note").data["backlinks"] == ["Table.md"]


def test_backlinks_follow_resolution_not_names(vault: Path, ctx) -> None:
    # both notes are named Plan; a link lands on exactly one of them
    write(vault, "a/Plan.md", "plan a")
    write(vault, "b/c/Plan.md", "plan b")
    write(vault, "a/Hub.md", "[[Plan]]")  # same folder: a/Plan.md
    write(vault, "Root.md", "[[Plan]] and [[c/Plan]]")  # shortest, then suffix
    assert note_links(ctx, "a/Plan").data["backlinks"] == ["Root.md", "a/Hub.md"]
    assert note_links(ctx, "b/c/Plan").data["backlinks"] == ["Root.md"]
    write(vault, "b/c/Other.md", "[[Plan]]")
    assert note_links(ctx, "b/c/Plan").data["backlinks"] == ["Root.md", "b/c/Other.md"]


def test_links_follow_renames_and_new_notes(vault: Path, make_ctx) -> None:
    ctx = make_ctx(vault, recheck_seconds=0)
    write(vault, "x/Plan.md", "far")
    write(vault, "deep/er/Hub.md", "[[Plan]]")
    assert shown_links(note_links(ctx, "deep/er/Hub").display)[0] == [("[[Plan]]", "x/Plan.md")]
    write(vault, "deep/er/Plan.md", "near")  # a note in the linking note's folder wins
    assert shown_links(note_links(ctx, "deep/er/Hub").display)[0] == [
        ("[[Plan]]", "deep/er/Plan.md")
    ]
    assert note_links(ctx, "x/Plan").data["backlinks"] == []


# -- names the model types -------------------------------------------------------------


@pytest.mark.parametrize(
    "typed, expected",
    [
        ("Plan", "Archive/Plan.md"),  # as [[Plan]] from the vault root
        ("[[Plan]]", "Archive/Plan.md"),
        ("[[Projects/Plan|the plan]]", "Projects/Plan.md"),
        ("[[Projects/Plan\\|the plan]]", "Projects/Plan.md"),
        ("PROJECTS/plan", "Projects/Plan.md"),
        ("Projects/Plan.md", "Projects/Plan.md"),
        ("Inbox/../Projects/Plan", "Projects/Plan.md"),
        ("Projects//./Plan.md", "Projects/Plan.md"),
        ("Cafe\u0301", "Café.md"),  # NFD typed
        ("Café", "Café.md"),  # NFC typed, NFD on disk
        ("re\u0301sume\u0301.md", "Résumé.md"),
        ("Interpretowanie stron internetowych", "Polski/Interpretowanie.md"),  # an alias
        ("bob the builder", "People/Robert.md"),  # a single-string alias, any case
        ("upper case", "Upper Case.MD"),
        ("Upper Case.MD", "Upper Case.MD"),
        ("Σημειώσεις", "Ελληνικά/Σημειώσεις.md"),
        ("v1.2 Release", "v1.2 Release.md"),
    ],
)
def test_names_the_model_types_open_the_note(
    testvault: Path, ctx, typed: str, expected: str
) -> None:
    index = ctx.deps.resource(VAULT).index()
    assert nfc(resolve_note(index, typed) or "") == expected
    assert read_note(ctx, typed) == NOTES[expected]


def test_resolve_note_from_a_note_follows_its_folder(testvault: Path, ctx) -> None:
    index = ctx.deps.resource(VAULT).index()
    assert resolve_note(index, "Plan", from_note="Archive/Old/Notes.md") == "Archive/Old/Plan.md"
    assert resolve_note(index, "[[./Plan]]", from_note="Projects/Status.md") == "Projects/Plan.md"
    assert resolve_note(index, "../Home", from_note="Archive/Index.md") == "Home.md"


def test_resolve_note_gives_the_path_a_write_would_create(testvault: Path, ctx) -> None:
    index = ctx.deps.resource(VAULT).index()
    # no such note: the path create_note would make (existing folders as on disk)
    assert resolve_note(index, "projects/New idea") == "Projects/New idea.md"
    assert resolve_note(index, "Inbox/../Private/x") == "Private/x.md"
    # a create takes the name as a path, even where a title elsewhere matches
    assert resolve_note(index, "Plan", for_create=True) == "Plan.md"
    assert resolve_note(index, "projects/plan", for_create=True) == "Projects/Plan.md"
    for refused in ("../outside", "Inbox/../../x", "/etc/passwd", ".obsidian/x", "", "[[]]"):
        assert resolve_note(index, refused) is None, refused
        assert resolve_note(index, refused, for_create=True) is None, refused


def test_resolve_note_follows_symlinks_and_refuses_escapes(
    vault: Path, ctx, tmp_path: Path
) -> None:
    write(vault, "Private/secret.md", "secret")
    os.symlink(vault / "Private" / "secret.md", vault / "shortcut.md")
    (vault / "Inbox").mkdir()
    os.symlink(vault / "Private", vault / "Inbox" / "linked")
    os.symlink(tmp_path, vault / "out")
    index = ctx.deps.resource(VAULT).index()
    assert resolve_note(index, "shortcut") == "Private/secret.md"
    assert resolve_note(index, "Inbox/linked/secret") == "Private/secret.md"
    assert resolve_note(index, "Inbox/linked/new", for_create=True) == "Private/new.md"
    assert resolve_note(index, "out/anything") is None
    assert resolve_note(index, "out/new", for_create=True) is None


def test_ambiguous_titles_ask_for_the_path(vault: Path, ctx) -> None:
    write(vault, "a/Todo.md", "a")
    write(vault, "b/Todo.md", "b")  # as short as a/Todo.md: Obsidian's pick is arbitrary
    index = ctx.deps.resource(VAULT).index()
    assert resolve_note(index, "Todo") is None
    with pytest.raises(ModelRetry, match="a/Todo.md, b/Todo.md"):
        read_note(ctx, "Todo")
    assert resolve_note(index, "Todo", from_note="b/x.md") == "b/Todo.md"


def test_writes_go_where_the_name_resolves(testvault: Path, ctx) -> None:
    message = create_note(ctx, "projects/New idea", "fresh")
    assert message.startswith("Created Projects/New idea.md")
    assert (testvault / "Projects" / "New idea.md").read_text() == "fresh\n"
    assert not (testvault / "projects").exists()
    with pytest.raises(ModelRetry, match="already exists"):
        create_note(ctx, "projects/plan", "again")  # the existing note, in any case
    assert "to Upper Case.MD" in append_to_note(ctx, "upper case", "more")
    assert (testvault / "Upper Case.MD").read_text().endswith("[[Home]]\nmore\n")


def test_md_extension_in_any_case_is_a_note(vault: Path, ctx) -> None:
    write(vault, "Loud.MD", "upper")
    write(vault, "Mixed.Md", "mixed")
    assert read_note(ctx, "Loud.MD") == "upper"
    assert read_note(ctx, "mixed") == "mixed"
    assert read_note(ctx, "[[Loud]]") == "upper"
