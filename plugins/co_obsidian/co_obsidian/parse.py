"""What a note says about itself: frontmatter, tags, aliases, headings and links.

Tags come from YAML frontmatter (``tags:`` as a list or a string, or ``tag:``) and from
inline ``#tags`` (nested ``#area/topic`` too), never from code blocks, inline code or
URLs. Aliases are whole strings, as Obsidian reads them: ``aliases:`` (any case, or the
older ``alias:``) as a list of strings or a single string. Links are what Obsidian
counts as links: ``[[wikilinks]]`` and ``![[embeds]]`` (``[[Note\\|alias]]`` as tables
write them too), markdown links to files in the vault (``[text](Note.md)``,
``![](image.png)``, URL-encoded or in ``<…>``) and wikilinks in frontmatter values; not
those in code or in ``%%comments%%``. Malformed frontmatter is not an error: the note is
still indexed as text, it just has no frontmatter tags or aliases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import unquote

import yaml

try:
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _Loader = yaml.SafeLoader

_FRONTMATTER = re.compile(
    r"\A\ufeff?---[ \t]*\r?\n(.*?)(?:\r?\n)?^(?:---|\.\.\.)[ \t]*$", re.S | re.M
)
_FENCE = re.compile(r"\n[ \t]*(```|~~~)(?:.*?\n[ \t]*\1[^\n]*|.*)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_COMMENT = re.compile(r"%%.*?(?:%%|\Z)", re.S)
_TAG = re.compile(r"#((?:[^\W]|[-/])+)")
_TAG_AFTER = frozenset(" \t\n\r([{,;:!?\"'")  # a tag starts a word
_HEADING = re.compile(r"\n#{1,6}[ \t]+([^\n]*)")
# no "!?" in front: a pattern starting with a literal is searched for at C speed
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_MDLINK = re.compile(
    r"\[[^\[\]\n]*\]\(\s*(<[^<>\n]*>|[^()\s]+)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_WHOLE_WIKILINK = re.compile(r"\s*\[\[([^\[\]\n]+?)\]\]\s*")


class Link(NamedTuple):
    """One link of a note: ``raw`` as written, ``path`` the part that names a file
    (before ``#`` and ``|``), ``embed`` for ``![[…]]`` and ``![…](…)``."""

    raw: str
    path: str
    embed: bool


@dataclass
class ParsedNote:
    title: str
    headings: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    frontmatter_error: str | None = None


def split_frontmatter(text: str) -> tuple[dict[str, Any], str, str | None]:
    """(frontmatter dict, body, error). No frontmatter is ``{}``; bad YAML gives an error."""
    m = _FRONTMATTER.match(text)
    if not m:
        return {}, text, None
    body = text[m.end() :].lstrip("\r\n")
    try:
        data = yaml.load(m.group(1), Loader=_Loader)
    except yaml.YAMLError as exc:
        return {}, body, " ".join(str(exc).split())[:200]
    if data is None:
        return {}, body, None
    if not isinstance(data, dict):
        return {}, body, "frontmatter is not a mapping"
    return data, body, None


def normalize_tag(tag: str) -> str:
    return tag.strip().lstrip("#").strip("/").lower()


def _words(value: Any) -> list[str]:
    """Tags from a frontmatter value: a list, or a string of words split on commas/spaces."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in re.split(r"[,\s]+", value) if v]
    if isinstance(value, list | tuple | set):
        out: list[str] = []
        for item in value:
            out += _words(item) if isinstance(item, str) else [str(item)]
        return out
    return [str(value)]


def aliases_of(meta: dict[str, Any]) -> list[str]:
    """Frontmatter aliases as Obsidian reads them: whole strings, trimmed."""
    found: list[str] = []
    for key, value in meta.items():
        if not isinstance(key, str) or key.lower() not in ("aliases", "alias"):
            continue
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        found += [item.strip() for item in items if isinstance(item, str) and item.strip()]
    return list(dict.fromkeys(found))


def _valid_tag(tag: str) -> bool:
    # Obsidian: letters, digits, _ - /, and not only digits.
    return bool(tag) and not tag.replace("/", "").isdigit()


def strip_code(body: str) -> str:
    """The body without fenced code blocks and inline code (tags/links there don't count)."""
    if "```" in body or "~~~" in body:
        body = _FENCE.sub("\n", body)
    if "`" in body:
        body = _INLINE_CODE.sub(" ", body)
    return body


def _in_url(prose: str, start: int) -> bool:
    word_start = max(prose.rfind(c, 0, start) for c in " \t\n") + 1
    return "://" in prose[word_start:start] or prose.startswith("www.", word_start)


def inline_tags(prose: str) -> list[str]:
    """``#tag`` and ``#area/topic`` where a word starts, outside URLs; not ``#123``."""
    if "#" not in prose:
        return []
    found = []
    for m in _TAG.finditer(prose):
        start = m.start()
        if start and prose[start - 1] not in _TAG_AFTER:
            continue
        if _in_url(prose, start):
            continue
        tag = normalize_tag(m.group(1))
        if _valid_tag(tag):
            found.append(tag)
    return found


def headings(text: str) -> list[str]:
    """The text of the note's markdown headings (code blocks excluded)."""
    prose = strip_code("\n" + text)
    return [h.strip().rstrip("#").strip() for h in _HEADING.findall(prose)]


def wikilink(inner: str, embed: bool = False) -> Link:
    """The link written as ``[[inner]]``: in a table ``\\|`` separates the display text."""
    target = inner.replace("\\|", "|").split("|", 1)[0]
    return Link(f"{'!' if embed else ''}[[{inner}]]", target.split("#", 1)[0].strip(), embed)


def links_in(prose: str) -> list[Link]:
    """Wikilinks, embeds and markdown links to files in the vault, in order."""
    found: list[tuple[int, Link]] = []
    if "[[" in prose:
        for m in _WIKILINK.finditer(prose):
            embed = m.start() > 0 and prose[m.start() - 1] == "!"
            found.append((m.start(), wikilink(m.group(1), embed)))
    if "](" in prose:
        for m in _MDLINK.finditer(prose):
            target = m.group(1)
            if target.startswith("<"):
                target = target[1:-1]
            if _SCHEME.match(target):
                continue  # a URL (https:, mailto:, obsidian:)
            embed = m.start() > 0 and prose[m.start() - 1] == "!"
            path = unquote(target).split("#", 1)[0].strip()
            found.append((m.start(), Link(("!" if embed else "") + m.group(0), path, embed)))
    found.sort(key=lambda item: item[0])
    return [link for _start, link in found]


def _frontmatter_links(value: Any) -> list[Link]:
    """Wikilinks given as frontmatter values (``up: "[[Parent]]"``, lists of them)."""
    if isinstance(value, str):
        m = _WHOLE_WIKILINK.fullmatch(value)
        return [wikilink(m.group(1))] if m else []
    if isinstance(value, list):
        return [link for item in value for link in _frontmatter_links(item)]
    if isinstance(value, dict):
        return [link for item in value.values() for link in _frontmatter_links(item)]
    return []


def parse_note(text: str, stem: str) -> ParsedNote:
    meta, body, error = split_frontmatter(text)
    tags = [normalize_tag(t) for key in ("tags", "tag") for t in _words(meta.get(key))]
    prose = strip_code("\n" + body)
    if "%%" in prose:
        prose = _COMMENT.sub(" ", prose)
    tags += inline_tags(prose)
    title = meta.get("title")
    links = _frontmatter_links(meta) + links_in(prose)
    return ParsedNote(
        title=str(title) if isinstance(title, str | int | float) else stem,
        headings=[h.strip().rstrip("#").strip() for h in _HEADING.findall("\n" + prose)],
        tags=list(dict.fromkeys(t for t in tags if _valid_tag(t))),
        links=links,
        aliases=aliases_of(meta),
        frontmatter_error=error,
    )
