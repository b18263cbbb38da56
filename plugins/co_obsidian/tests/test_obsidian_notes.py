"""list_notes, read_note, note_links, create_note, append_to_note on real vaults."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from co_obsidian.tools import (
    append_to_note,
    create_note,
    list_notes,
    note_links,
    read_note,
    search_notes,
)
from obsidian_vaults import write
from pydantic_ai import ModelRetry

FRONTMATTER_VARIANTS = {
    "list.md": "---\ntags:\n  - Work\n  - project/alpha\n---\nbody",
    "flow.md": "---\ntags: [reading, 'project/beta']\n---\nbody",
    "string.md": "---\ntags: travel, work\n---\nbody",
    "single.md": "---\ntag: '#personal'\n---\nbody",
    "none.md": "no frontmatter, inline #idea and #project/alpha/sub here",
    "broken.md": "---\ntags: [unclosed\ntitle: : :\n---\nbroken yaml but #rescued inline",
    "code.md": "```\n#notatag\n```\n`#alsonot` see https://example.com/#anchor and a#b and #123",
    "empty.md": "---\n---\n",
}


def listed(result) -> list[str]:
    return [
        line[2:].split("  [")[0] for line in result.display.splitlines() if line.startswith("- ")
    ]


@pytest.fixture
def tagged(vault: Path) -> Path:
    for rel, text in FRONTMATTER_VARIANTS.items():
        write(vault, rel, text)
    return vault


def test_tags_from_frontmatter_variants_and_inline(tagged: Path, ctx) -> None:
    assert listed(list_notes(ctx, tag="work")) == ["list.md", "string.md"]
    assert listed(list_notes(ctx, tag="#reading")) == ["flow.md"]
    assert listed(list_notes(ctx, tag="personal")) == ["single.md"]
    assert listed(list_notes(ctx, tag="idea")) == ["none.md"]
    assert listed(list_notes(ctx, tag="rescued")) == ["broken.md"]
    # malformed frontmatter: still a note, still searchable, frontmatter text included
    assert search_notes(ctx, "broken yaml").data["paths"] == ["broken.md"]
    assert search_notes(ctx, "unclosed").data["paths"] == ["broken.md"]


def test_nested_tags(tagged: Path, ctx) -> None:
    assert listed(list_notes(ctx, tag="project")) == ["flow.md", "list.md", "none.md"]
    assert listed(list_notes(ctx, tag="project/alpha")) == ["list.md", "none.md"]
    assert listed(list_notes(ctx, tag="project/alpha/sub")) == ["none.md"]
    assert list_notes(ctx, tag="proj").count == 0


def test_no_tags_from_code_urls_or_mid_word(tagged: Path, ctx) -> None:
    for tag in ("notatag", "alsonot", "anchor", "b", "123"):
        assert list_notes(ctx, tag=tag).count == 0, tag


def test_list_all_with_tags_shown_and_folder_filter(vault: Path, ctx) -> None:
    write(vault, "top.md", "#root")
    write(vault, "daily/2024-01-01.md", "---\ntags: [journal]\n---\n")
    write(vault, "daily/old/2023-12-31.md", "x")
    write(vault, "dailyish.md", "not in the folder")
    write(vault, ".obsidian/hidden.md", "x")
    everything = list_notes(ctx)
    assert everything.count == 4
    assert "- daily/2024-01-01.md  [journal]" in everything.display
    daily = list_notes(ctx, folder="daily/")
    assert listed(daily) == ["daily/2024-01-01.md", "daily/old/2023-12-31.md"]
    assert list_notes(ctx, folder="daily", tag="journal").count == 1
    assert list_notes(ctx, folder="nowhere").count == 0
    with pytest.raises(ModelRetry, match="outside the vault"):
        list_notes(ctx, folder="../")


def test_list_pages(vault: Path, ctx) -> None:
    for i in range(120):
        write(vault, f"n{i:03d}.md", "x")
    first, third = list_notes(ctx), list_notes(ctx, page=3)
    assert (first.count, first.has_more, len(listed(first))) == (120, True, 50)
    assert (third.has_more, listed(third)[0], len(listed(third))) == (False, "n100.md", 20)


def test_read_note_by_path_title_or_wikilink(vault: Path, ctx) -> None:
    text = "---\ntags: [a]\n---\n# Plan\nDetails."
    write(vault, "projects/Big Plan.md", text)
    write(vault, "projects/Other.md", "other")
    for name in (
        "projects/Big Plan.md",
        "projects/Big Plan",
        "Big Plan",
        "big plan",
        "[[Big Plan|the plan]]",
    ):
        assert read_note(ctx, name) == text, name
    # a heading after "#" reads that section; whole=True the whole note
    assert read_note(ctx, "[[Big Plan#Plan]]").endswith("]\n# Plan\nDetails.\n")
    assert read_note(ctx, "[[Big Plan#Plan]]", whole=True) == text
    with pytest.raises(ModelRetry, match="No note named 'Nope'"):
        read_note(ctx, "Nope")


def test_read_note_ambiguous_title_asks_for_the_path(vault: Path, ctx) -> None:
    write(vault, "a/Todo.md", "a")
    write(vault, "b/Todo.md", "b")
    with pytest.raises(ModelRetry, match="a/Todo.md, b/Todo.md"):
        read_note(ctx, "Todo")
    assert read_note(ctx, "b/Todo") == "b"


def test_read_note_alias(vault: Path, ctx) -> None:
    write(vault, "Robert.md", "---\naliases: [Bob]\n---\nhi")
    assert read_note(ctx, "bob").endswith("hi")


def test_huge_note_read_is_capped_with_a_notice(vault: Path, ctx) -> None:
    write(vault, "huge.md", "x" * 200_000)
    text = read_note(ctx, "huge")
    assert len(text) < 61_000 and "showing the first 60,000 of 200,000 characters" in text


def test_traversal_and_symlink_escapes_are_refused(vault: Path, ctx, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("password: hunter2 quokka")
    write(vault, "ok.md", "fine quokka")
    os.symlink(secret, vault / "link.md")
    os.symlink(tmp_path, vault / "escape")
    os.symlink(vault / "ok.md", vault / "inside.md")
    for name in (
        "../secret.md",
        "../secret",
        str(secret),
        "link.md",
        "link",
        "escape/secret.md",
        "sub/../../secret",
    ):
        with pytest.raises(ModelRetry, match="outside the vault"):
            read_note(ctx, name)
    write(vault, ".obsidian/app.md", "config")
    for name in (".obsidian/app.md", ".obsidian/app"):
        with pytest.raises(ModelRetry, match="not a note"):
            read_note(ctx, name)
    assert read_note(ctx, "inside") == "fine quokka"  # a symlink that stays inside is fine
    found = search_notes(ctx, "quokka").display
    assert "hunter2" not in found and "link.md" not in found and "escape" not in found
    with pytest.raises(ModelRetry, match="outside the vault"):
        create_note(ctx, "../evil", "x")
    with pytest.raises(ModelRetry, match="outside the vault"):
        create_note(ctx, "escape/evil", "x")
    with pytest.raises(ModelRetry, match="outside the vault"):
        append_to_note(ctx, "link", "x")
    assert not (tmp_path / "evil.md").exists() and secret.read_text().startswith("password")


def test_note_links_and_backlinks(vault: Path, ctx) -> None:
    write(
        vault,
        "Hub.md",
        "See [[Spoke A]], [[folder/Spoke B|B]], [[Spoke A#part]] and [[Missing]].\n```\n[[InCode]]\n```",
    )
    write(vault, "Spoke A.md", "back to [[hub]]")
    write(vault, "folder/Spoke B.md", "nothing")
    write(vault, "Other.md", "also ![[Hub.md]]")
    result = note_links(ctx, "Hub")
    assert "- [[Spoke A]] → Spoke A.md" in result.display
    assert "- [[folder/Spoke B|B]] → folder/Spoke B.md" in result.display
    assert "- [[Spoke A#part]] → Spoke A.md" in result.display
    assert "- [[Missing]] → (no such note yet)" in result.display
    assert "InCode" not in result.display
    assert result.data["outgoing"] == ["Spoke A.md", "folder/Spoke B.md"]
    assert result.data["backlinks"] == ["Other.md", "Spoke A.md"]
    assert result.count == 6  # four links, two backlinks
    assert note_links(ctx, "folder/Spoke B").data["backlinks"] == ["Hub.md"]


def test_create_and_append_then_undo(vault: Path, make_ctx) -> None:
    ctx = make_ctx(vault, recheck_seconds=0)
    write(vault, "Log.md", "line one")
    ctx.deps.changes.next_turn()  # the agent starts a turn per user message
    message = create_note(ctx, "inbox/Idea", "# Idea\nA flying quokka")
    assert message.startswith("Created inbox/Idea.md")
    created = vault / "inbox" / "Idea.md"
    assert created.read_text() == "# Idea\nA flying quokka\n"
    assert search_notes(ctx, "flying quokka").count == 1
    with pytest.raises(ModelRetry, match="already exists"):
        create_note(ctx, "inbox/Idea.md", "again")
    with pytest.raises(ModelRetry, match="hidden folders"):
        create_note(ctx, ".obsidian/plugins", "x")
    assert "Appended" in append_to_note(ctx, "[[Log]]", "line two")
    assert (vault / "Log.md").read_text() == "line one\nline two\n"
    assert list_notes(ctx, tag="fresh").count == 0
    append_to_note(ctx, "Log", "#fresh tag")
    assert list_notes(ctx, tag="fresh").count == 1
    report = ctx.deps.changes.undo()  # what /undo does
    assert [Path(p).name for p in report.removed] == ["Idea.md"]  # it was created
    assert [Path(p).name for p in report.restored] == ["Log.md"]
    assert not created.exists()
    assert read_note(ctx, "Log") == "line one"
    assert search_notes(ctx, "quokka").count == 0
    assert list_notes(ctx, tag="fresh").count == 0
