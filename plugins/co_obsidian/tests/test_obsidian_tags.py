"""Obsidian's tag rules (help.obsidian.md/tags, and issue 39's real vault) on generated
variants: where a tag may start, what it holds, where it ends (ASCII, general and CJK
punctuation), and that a nested tag lists under its parent."""

from __future__ import annotations

import itertools
import unicodedata

import pytest
from co_obsidian.parse import parse_note
from co_obsidian.syntax import CJK_PUNCTUATION
from co_obsidian.tools import list_notes
from obsidian_vaults import write

BODIES = ["plan", "Projekt/Über", "проект/план", "東京/会議", "한국어", "🚀launch", "x_1-2", "人々"]
STARTS = {  # text before the tag -> is it a tag there?
    "": True,
    "word ": True,
    "x\t": True,  # (a tab opening a line makes it code)
    "\u00a0": True,
    "\u3000": True,
    "(": True,
    "\uff08": True,  # （
    "_": True,
    "**": True,
    "[": False,
    '"': False,
    ".": False,
    "a": False,
    "日本": False,
    "「": False,
    "\u2014": False,  # —
}
ENDS = [".", ",", ":", ";", "!", "?", ")", "'", "\u2026", "\u201d", *CJK_PUNCTUATION]


@pytest.mark.parametrize(("before", "tagged"), STARTS.items())
def test_where_a_tag_starts(before, tagged):
    for body in BODIES:
        found = parse_note(f"{before}#{body} after", "n").tags
        want = [unicodedata.normalize("NFC", body).lower()] if tagged else []
        assert found == want, (before, body)


def test_every_cjk_and_ascii_punctuation_mark_ends_a_tag():
    checked = 0
    for body, end in itertools.product(BODIES, ENDS):
        text = f"#{body}{end}rest"
        assert parse_note(text, "n").tags == [body.lower()], text
        checked += 1
    assert checked == len(BODIES) * len(ENDS) and len(CJK_PUNCTUATION) > 100


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("#タグ。次の文", ["タグ"]),
        ("#标签，然后", ["标签"]),
        ("#標籤；還有", ["標籤"]),
        ("#tag。", ["tag"]),
        ("（#会議）の後", ["会議"]),
        ("#東京・大阪", ["東京"]),
        ("#人々 #コーヒー #〇〇", ["人々", "コーヒー", "〇〇"]),  # letters of those blocks
        ("#ｶﾀｶﾅ #ＡＢＣ", ["ｶﾀｶﾅ", "ａｂｃ"]),
        ("#price￥100", ["price￥100"]),  # a symbol, not punctuation
        ("#projects／x", ["projects"]),  # a fullwidth slash is punctuation, not nesting
    ],
)
def test_cjk_text(text, tags):
    assert parse_note(text, "n").tags == tags


def test_a_note_whose_only_tag_is_nested_lists_under_its_parent(tmp_path, make_ctx):
    vault = tmp_path / "vault"
    notes = {
        "plain.md": "#projects/x",
        "paren.md": "Due soon (#projects/x).",
        "fullwidth.md": "締め切り（#projects/会議）。",
        "cjk-end.md": "会議 #projects/東京。",
        "upper.md": "#Projects/Alpha",
        "deep.md": "#projects/a/b/c",
        "front.md": "---\ntags: [projects/y]\n---\nBody.",
        "front-hash.md": "---\ntags:\n  - '#projects/z'\n---\nBody.",
        "nfd.md": unicodedata.normalize("NFD", "#projects/café"),
        "other.md": "#projectsx #project/x #myprojects/x",
    }
    for rel, text in notes.items():
        write(vault, rel, text + "\n")
    ctx = make_ctx(vault)
    for asked in ("projects", "#projects", "Projects", "projects/"):
        listed = list_notes(ctx, tag=asked).display
        for rel in notes:
            assert (f"- {rel}" in listed) == (rel != "other.md"), (asked, rel, listed)
