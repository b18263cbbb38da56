"""What a note says about itself: frontmatter, tags, headings and wikilinks.

Tags come from YAML frontmatter (``tags:`` as a list or a string, or ``tag:``) and from
inline ``#tags`` (nested ``#area/topic`` too), never from code blocks, inline code or
URLs. Malformed frontmatter is not an error: the note is still indexed as text, it just
has no frontmatter tags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

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
_TAG = re.compile(r"#((?:[^\W]|[-/])+)")
_TAG_AFTER = frozenset(" \t\n\r([{,;:!?\"'")  # a tag starts a word
_HEADING = re.compile(r"\n#{1,6}[ \t]+([^\n]*)")
_WIKILINK = re.compile(r"\[\[([^\[\]|#^\n]*)(?:[#^][^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")


@dataclass
class ParsedNote:
    title: str
    headings: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    frontmatter_error: str | None = None


_SIMPLE_KEY = re.compile(r"([A-Za-z_][\w-]*):(?:[ \t]+(.*))?")
_SIMPLE_ITEM = re.compile(r"[ \t]*-[ \t]+(.*)")
_PLAIN = re.compile(r"[^\s\"'\[\]{}#&*!|>%@`,:-][^\[\]{}#:,]*")


def _simple_yaml(source: str) -> dict[str, Any] | None:
    """Plain ``key: value`` / ``- item`` frontmatter without YAML's cost; None if not that simple."""
    data: dict[str, Any] = {}
    key = None
    for line in source.splitlines():
        if not line.strip():
            continue
        if m := _SIMPLE_KEY.fullmatch(line.rstrip()):
            key, value = m.group(1), m.group(2)
            if value is None:
                data[key] = None
            elif _PLAIN.fullmatch(value.strip()):
                data[key] = value.strip()
            else:
                return None
        elif (m := _SIMPLE_ITEM.fullmatch(line.rstrip())) and key is not None:
            if not _PLAIN.fullmatch(m.group(1).strip()) or not isinstance(data[key], list | None):
                return None
            data[key] = (data[key] or []) + [m.group(1).strip()]
        else:
            return None
    return data


def split_frontmatter(text: str) -> tuple[dict[str, Any], str, str | None]:
    """(frontmatter dict, body, error). No frontmatter is ``{}``; bad YAML gives an error."""
    m = _FRONTMATTER.match(text)
    if not m:
        return {}, text, None
    body = text[m.end() :].lstrip("\r\n")
    simple = _simple_yaml(m.group(1))
    if simple is not None:
        return simple, body, None
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


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in re.split(r"[,\s]+", value) if v]
    if isinstance(value, list | tuple | set):
        out: list[str] = []
        for item in value:
            out += _as_list(item) if isinstance(item, str) else [str(item)]
        return out
    return [str(value)]


def _valid_tag(tag: str) -> bool:
    # Obsidian: letters, digits, _ - /, and not only digits.
    return bool(tag) and not tag.replace("/", "").isdigit()


def strip_code(body: str) -> str:
    """The body without fenced code blocks, inline code and URLs (tags/links there don't count)."""
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


def parse_note(text: str, stem: str) -> ParsedNote:
    meta, body, error = split_frontmatter(text)
    tags = [normalize_tag(t) for key in ("tags", "tag") for t in _as_list(meta.get(key))]
    prose = strip_code("\n" + body)
    tags += inline_tags(prose)
    aliases = _as_list(meta.get("aliases")) + _as_list(meta.get("alias"))
    title = meta.get("title")
    headings = [h.strip().rstrip("#").strip() for h in _HEADING.findall("\n" + prose)]
    links = [m.strip() for m in _WIKILINK.findall(prose)] if "[[" in prose else []
    return ParsedNote(
        title=str(title) if isinstance(title, str | int | float) else stem,
        headings=headings,
        tags=list(dict.fromkeys(t for t in tags if _valid_tag(t))),
        links=list(dict.fromkeys(link for link in links if link)),
        aliases=[str(a) for a in aliases],
        frontmatter_error=error,
    )
