"""What a note says about itself: front matter, tags, aliases, headings, blocks and links,
read from the tokens of a CommonMark parser with Obsidian's extensions
(:mod:`co_obsidian.syntax`); the rules are in docs/obsidian.md, *How notes are read*.

Nothing inside code (fenced, indented, inline), math, HTML blocks or ``%%comments%%``
counts. Tags come from the front matter (any key spelled ``tags`` or ``tag`` in any case,
a list or a string of words split on commas and spaces) and from inline ``#tags``.
Aliases are whole strings (``aliases:`` or ``alias:`` in any case). Links are wikilinks,
embeds, Markdown links and images to files in the vault (not URLs), and wikilinks given
as front matter values. Malformed front matter is not an error: the note is still
indexed as text, it just has no front matter tags or aliases.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import unquote

import yaml

from co_obsidian import syntax

try:
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _Loader = yaml.SafeLoader

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_WHOLE_WIKILINK = re.compile(r"\s*\[\[([^\[\]\n]+?)\]\]\s*")
_TAG_KEY = re.compile(r"tags?", re.I)
_ALIAS_KEY = re.compile(r"alias(es)?", re.I)
_WORDS = re.compile(r"[,\s]+")
_COMMENTS = re.compile(r"%%.*?(?:%%|\Z)", re.S)
_TRAILING_ID = re.compile(r"\s+\^[A-Za-z0-9-]+\s*\Z")
_KINDS = {
    "paragraph_open": "paragraph",
    "heading_open": "heading",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "blockquote_open": "blockquote",
    "table_open": "table",
    "fence": "code",
    "code_block": "code",
    "html_block": "html",
    "math_block": "math",
    "math_block_label": "math",
    "hr": "rule",
    "footnote_reference_open": "footnote",
}


class Link(NamedTuple):
    """One link of a note: ``raw`` as written, ``path`` the part that names a file
    (before ``#`` and ``|``), ``embed`` for ``![[…]]`` and ``![…](…)``."""

    raw: str
    path: str
    embed: bool


class Heading(NamedTuple):
    level: int
    text: str
    line: int  # where it is in the note (0-based)


class Block(NamedTuple):
    """The lines ``start`` to ``end`` (exclusive) that the block id names, and what they
    are (paragraph, list item, blockquote, callout, table, heading, …)."""

    start: int
    end: int
    kind: str


@dataclass
class ParsedNote:
    title: str
    headings: list[Heading] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    blocks: dict[str, Block] = field(default_factory=dict)
    frontmatter_error: str | None = None


def _frontmatter(source: str) -> tuple[dict[str, Any], str | None]:
    """(front matter dict, error): bad YAML, or YAML that is not a mapping, is an error."""
    try:
        data = yaml.load(source, Loader=_Loader)
    except yaml.YAMLError as exc:
        return {}, " ".join(str(exc).split())[:200]
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "frontmatter is not a mapping"
    return data, None


def normalize_tag(tag: str) -> str:
    """A tag as it is compared: no ``#``, no ``/`` at either end, NFC, lower case."""
    return unicodedata.normalize("NFC", tag.strip().lstrip("#").strip("/")).lower()


def _words(value: Any) -> list[str]:
    """Front matter tags: a list, or a string of words split on commas and spaces."""
    if value is None:
        return []
    if isinstance(value, str):
        return [word for word in _WORDS.split(value) if word]
    if isinstance(value, list | tuple | set):
        return [word for item in value for word in _words(item)]
    return [str(value)]


def frontmatter_tags(meta: dict[str, Any]) -> list[str]:
    """The tags of every key spelled ``tags``/``tag`` in any case; what is not a valid
    tag (``2024``, ``a.b``) is left out."""
    found: list[str] = []
    for key, value in meta.items():
        if isinstance(key, str) and _TAG_KEY.fullmatch(key):
            found += [word.lstrip("#") for word in _words(value)]
    return [normalize_tag(t) for t in found if syntax.is_tag(t)]


def aliases_of(meta: dict[str, Any]) -> list[str]:
    """Front matter aliases as Obsidian reads them: whole strings, trimmed."""
    found: list[str] = []
    for key, value in meta.items():
        if not isinstance(key, str) or not _ALIAS_KEY.fullmatch(key):
            continue
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        found += [item.strip() for item in items if isinstance(item, str) and item.strip()]
    return list(dict.fromkeys(found))


def wikilink(inner: str, embed: bool = False) -> Link:
    """The link written as ``[[inner]]``: in a table ``\\|`` separates the display text."""
    target = inner.replace("\\|", "|").split("|", 1)[0]
    return Link(f"{'!' if embed else ''}[[{inner}]]", target.split("#", 1)[0].strip(), embed)


def _frontmatter_links(value: Any) -> list[Link]:
    """Wikilinks given as front matter values (``up: "[[Parent]]"``, lists of them)."""
    if isinstance(value, str):
        m = _WHOLE_WIKILINK.fullmatch(value)
        return [wikilink(m.group(1))] if m else []
    if isinstance(value, list):
        return [link for item in value for link in _frontmatter_links(item)]
    if isinstance(value, dict):
        return [link for item in value.values() for link in _frontmatter_links(item)]
    return []


def _markdown_link(token: Any, embed: bool) -> Link | None:
    """A Markdown link or image to a file in the vault; None for a URL (``https:``,
    ``mailto:``, ``obsidian:``)."""
    target = token.attrGet("src" if embed else "href") or ""
    if _SCHEME.match(target):
        return None
    raw = token.meta.get("raw") or target
    return Link(raw, unquote(target).split("#", 1)[0].strip(), embed)


def _heading_text(inline: Any) -> str:
    """A heading's text as written, without comments or a closing block id."""
    text = inline.content
    children = inline.children or []
    if children and children[0].type == "obsidian_comment" and not text.startswith("%%"):
        end = text.find("%%")  # a comment opened above runs into the heading
        text = "" if end < 0 else text[end + 2 :]
    if "%%" in text:
        text = _COMMENTS.sub("", text)
    return _TRAILING_ID.sub("", text).strip()


class _Reader:
    """Walks the tokens once, keeping the containers open at each point."""

    def __init__(self) -> None:
        self.meta: dict[str, Any] = {}
        self.error: str | None = None
        self.tags: list[str] = []
        self.links: list[Link] = []
        self.headings: list[Heading] = []
        self.blocks: dict[str, Block] = {}
        self.sections: list[Any] = []  # the tokens of the note's top-level blocks
        self.open: list[Any] = []

    def read(self, tokens: list[Any]) -> None:
        sections, opened = self.sections, self.open
        for index, token in enumerate(tokens):
            nesting = token.nesting
            if nesting == -1:
                if opened:
                    opened.pop()
                continue
            kind = token.type
            if token.level == 0 and kind in _KINDS and token.map:
                sections.append(token)
            if nesting == 1:
                opened.append(token)
                if kind == "heading_open":
                    text = _heading_text(tokens[index + 1])
                    if text:
                        self.headings.append(Heading(int(token.tag[1]), text, token.map[0]))
            elif kind == "inline":
                if token.children:
                    self._inline(token)
            elif kind == "front_matter":
                self.meta, self.error = _frontmatter(token.content)

    @staticmethod
    def _section(token: Any) -> Block:
        kind = _KINDS[token.type]
        if kind == "blockquote" and token.meta.get("callout"):
            kind = "callout"
        return Block(token.map[0], token.map[1], kind)

    def _inline(self, inline: Any) -> None:
        for child in inline.children:
            kind = child.type
            if kind == "obsidian_tag":
                tag = normalize_tag(child.content)
                if tag:
                    self.tags.append(tag)
            elif kind == "wikilink":
                inner = child.meta["inner"]
                if any(t.type == "table_open" for t in self.open):
                    inner = inner.replace("|", "\\|")  # the table read `\|` as `|`
                self.links.append(wikilink(inner, child.meta["embed"]))
            elif kind in ("link_open", "image"):
                link = _markdown_link(child, embed=kind == "image")
                if link is not None:
                    self.links.append(link)
            elif kind == "block_id":
                self._block(child.meta["id"], alone=len(inline.children) == 1)

    def _block(self, block_id: str, alone: bool) -> None:
        """A block id names the list item it ends, else the top-level block it ends; on
        a line of its own, the top-level block before it."""
        for token in reversed(self.open):
            if token.type == "list_item_open" and token.map:
                start, end = token.map
                self.blocks.setdefault(block_id, Block(start, end, "list item"))
                return
        if alone and len(self.sections) > 1 and len(self.open) == 1:
            before = self._section(self.sections[-2])
            end = self.sections[-1].map[1]
            self.blocks.setdefault(block_id, Block(before.start, end, before.kind))
        elif self.sections:
            self.blocks.setdefault(block_id, self._section(self.sections[-1]))


def parse_note(text: str, stem: str) -> ParsedNote:
    tokens, _env = syntax.parse(text.removeprefix("\ufeff"))
    reader = _Reader()
    reader.read(tokens)
    meta = reader.meta
    title = meta.get("title")
    return ParsedNote(
        title=str(title) if isinstance(title, str | int | float) else stem,
        headings=reader.headings,
        tags=list(dict.fromkeys(frontmatter_tags(meta) + reader.tags)),
        links=_frontmatter_links(meta) + reader.links,
        aliases=aliases_of(meta),
        blocks=reader.blocks,
        frontmatter_error=reader.error,
    )
