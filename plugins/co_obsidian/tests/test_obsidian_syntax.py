"""Co's parser against plain CommonMark on generated notes, and the Obsidian rules on
families of variants.

The generated notes nest fences (of backticks and tildes, longer and shorter, with and
without info strings), blockquotes, callouts, list items, indented code, code spans and
HTML blocks, with probe tags and links scattered through them. Plain CommonMark
(markdown-it-py without Co's plugins) says which probes are prose; Co must read exactly
those as tags and links: its Obsidian plugins may not change what is code.
"""

from __future__ import annotations

import random
import re

import pytest
from co_obsidian.parse import parse_note
from markdown_it import MarkdownIt

PROBE = re.compile(r"#(p\d+)|\[\[(L\d+)\]\]")


class Note:
    """A generated note: ``text``, and a counter for fresh probe names."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.count = 0

    def probe(self) -> str:
        self.count += 1
        return f"#p{self.count}" if self.rng.random() < 0.6 else f"[[L{self.count}]]"

    def words(self) -> str:
        return " ".join(
            self.probe() if self.rng.random() < 0.5 else self.rng.choice(["alpha", "beta", "γ"])
            for _ in range(self.rng.randint(1, 4))
        )

    def inline(self) -> str:
        r = self.rng.random()
        if r < 0.25:
            ticks = "`" * self.rng.randint(1, 3)
            inner = self.words() + (" ` " if len(ticks) > 1 else " ")
            return f"{self.words()} {ticks} {inner}{ticks} {self.words()}"
        return self.words()

    def fence(self, depth: int) -> list[str]:
        char = self.rng.choice("`~")
        width = self.rng.randint(3, 5)
        info = self.rng.choice(["", "python", "yaml", "markdown"])
        lines = [char * width + info]
        for _ in range(self.rng.randint(1, 3)):
            r = self.rng.random()
            if r < 0.3:  # a shorter fence, or one with an info string: does not close
                lines.append(char * self.rng.randint(3, width) + self.rng.choice(["", "js"]))
            else:
                lines.append(self.words())
        return [*lines, char * (width + self.rng.randint(0, 1))]

    def block(self, depth: int = 0) -> list[str]:
        r = self.rng.random()
        if depth < 3 and r < 0.2:
            inner = self.block(depth + 1)
            head = [f"[!note] {self.words()}"] if self.rng.random() < 0.3 else []
            return [f"> {line}" if line else ">" for line in head + inner]
        if depth < 3 and r < 0.4:
            inner = self.block(depth + 1)
            return [
                ("- " if i == 0 else "  ") + line if line else "" for i, line in enumerate(inner)
            ]
        if r < 0.65:
            return self.fence(depth)
        if r < 0.72 and depth == 0:
            return ["    " + self.words()]
        if r < 0.78 and depth == 0:
            return ["<div>", self.words(), "</div>"]
        return [self.inline() for _ in range(self.rng.randint(1, 2))]

    def text(self) -> str:
        blocks = [self.block() for _ in range(self.rng.randint(2, 6))]
        return "\n\n".join("\n".join(b) for b in blocks) + "\n"


def prose_probes(text: str) -> tuple[set[str], set[str]]:
    """(tags, link targets) among the probes plain CommonMark puts in prose."""
    tags: set[str] = set()
    links: set[str] = set()
    for token in MarkdownIt("commonmark", {"html": True}).parse(text):
        if token.type != "inline":
            continue
        prose = "".join(c.content for c in token.children or [] if c.type == "text")
        for m in PROBE.finditer(prose):
            if m.group(1):
                tags.add(m.group(1))
            else:
                links.add(m.group(2))
    return tags, links


@pytest.mark.parametrize("seed", range(300))
def test_code_is_where_commonmark_puts_it(seed: int) -> None:
    text = Note(random.Random(seed)).text()
    tags, links = prose_probes(text)
    note = parse_note(text, "generated")
    assert set(note.tags) == tags, text
    assert {link.path for link in note.links} == links, text


# -- families of variants --------------------------------------------------------------

TAG_VARIANTS = {
    # where a tag may start: a line's start, whitespace of any kind, an emphasis mark
    "#a": ["a"],
    "x #a": ["a"],
    "x\u2003#a x\u00a0#b x\u3000#c": ["a", "b", "c"],
    "_#a_ *#b* **#c**": ["a", "b", "c"],
    "#a#b": ["a", "b"],
    "(#a) （#b）": ["a", "b"],
    # where it may not: after other punctuation or inside a word
    "[#b] {#c} '#d' «#e» „#f“ x#g 1#h .#i ,#j 「#k」 、#l": [],
    # what it holds: letters of any script, digits, _ - / and emoji; not digits alone
    "#Ελλάδα #Москва #東京 #한국어 #עברית #ไทย": [
        "ελλάδα",
        "москва",
        "東京",
        "한국어",
        "עברית",
        "ไทย",
    ],
    "#a1 #1a #1_000 #1-2 #__ #-": ["a1", "1a", "1_000", "1-2", "__", "-"],
    "#1 #12 #123456": [],
    "#a/b/c #a/ #🙂 #x🙂y": ["a/b/c", "a", "🙂", "x🙂y"],
    # where it ends: at punctuation, spaces and the general-punctuation block
    "#a.b #c,d #e;f #g!h #i?j #k:l #m'n #o\u2014p #q\u2026r": [
        "a",
        "c",
        "e",
        "g",
        "i",
        "k",
        "m",
        "o",
        "q",
    ],
    # case does not matter
    "#Tag #TAG #tag": ["tag"],
}


@pytest.mark.parametrize("text, expected", list(TAG_VARIANTS.items()))
def test_tag_variants(text: str, expected: list[str]) -> None:
    assert parse_note(text, "n").tags == expected


LINK_VARIANTS = {
    "[[A]] ![[B.png]] [c](C.md) ![d](D.png) [e](<E F.md>) [f](G%20H.md)": [
        "A",
        "B.png",
        "C.md",
        "D.png",
        "E F.md",
        "G H.md",
    ],
    "[[A#H]] [[B#^x|shown]] [[#H]] [h](#h) [[C|D]]": ["A", "B", "", "", "C"],
    "[w](https://x.y) [m](mailto:a@b.c) [o](obsidian://open) <https://x.y/A.md>": [],
    "`[[A]]` ``[[B]]`` %%[[C]]%% $[[D]]$ [ref][r]\n\n[r]: Ref.md": ["Ref.md"],
    "> [!info] [[Q]]\n> - [[R]]\n>   > [[S]]": ["Q", "R", "S"],
    "| a | [[T\\|t]] |\n|---|---|\n| [[U]] | [[V\\|v]] |": ["T", "U", "V"],
}


@pytest.mark.parametrize("text, expected", list(LINK_VARIANTS.items()))
def test_link_variants(text: str, expected: list[str]) -> None:
    assert [link.path for link in parse_note(text, "n").links] == expected


FRONTMATTER_TAGS = {
    "---\ntags: [a, B]\n---\n": ["a", "b"],
    "---\nTags:\n  - a\n  - '#b'\n---\n": ["a", "b"],
    "---\nTAG: a, b c\n---\n": ["a", "b", "c"],
    "---\ntags: a\ntag: b\n---\n": ["a", "b"],
    "---\ntags: [2024, 1.5, a.b, 'x y', ok]\n---\n": ["x", "y", "ok"],
    "---\ntagged: a\nmytags: b\n---\n": [],
    "---\ntags: [a\n---\n#inline": ["inline"],  # bad YAML: only the inline tag
}


@pytest.mark.parametrize("text, expected", list(FRONTMATTER_TAGS.items()))
def test_front_matter_tags(text: str, expected: list[str]) -> None:
    assert parse_note(text, "n").tags == expected
