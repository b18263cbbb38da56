"""The part of a note that ``Note#Heading``, ``Note#H1#H2`` or ``Note#^block`` names, as
Obsidian opens such links (docs/obsidian.md, *Reading part of a note*).

A heading's section runs from the heading to the next heading of the same or a higher
level (fewer ``#``), or to the end of the note. ``#H1#H2`` is the heading H2 inside the
section of H1. Heading text is compared in any case and Unicode form, without the
characters a link to it cannot hold (``# | ^ : % [ ] \\``) nor emphasis marks; the first
heading that matches wins. A block id names the block it closes (see
:class:`co_obsidian.parse.Block`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from co_obsidian.parse import Heading, ParsedNote

_NOT_IN_LINKS = re.compile(r"[#|^:%\[\]\\*_`~=]+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what ends a line for the parser (not \f, U+2028)


@dataclass(frozen=True)
class Section:
    """What a subpath names: ``label`` as the user would say it, the note's lines
    ``start``..``end`` (exclusive, 0-based), and their text."""

    label: str
    kind: str
    start: int
    end: int
    text: str
    total: int  # the note's lines


class NoSuchPart(LookupError):
    """The note has no such heading or block; the message says what it does have."""


def split_subpath(typed: str) -> tuple[str, str]:
    """``Note#Heading`` -> (``Note``, ``Heading``); no ``#``: (typed, "")."""
    name, _, subpath = typed.partition("#")
    return name, subpath.strip()


def heading_key(text: str) -> str:
    """A heading as a link to it is compared (see the module docstring)."""
    text = unicodedata.normalize("NFC", text).casefold()
    return " ".join(_NOT_IN_LINKS.sub(" ", text).split())


def _section_end(headings: list[Heading], index: int, end: int) -> int:
    level = headings[index].level
    for later in headings[index + 1 :]:
        if later.level <= level:
            return later.line
    return end


def _find_heading(headings: list[Heading], wanted: str, start: int, end: int) -> int | None:
    inside = [i for i, h in enumerate(headings) if start <= h.line < end]
    for i in inside:
        if headings[i].text == wanted:
            return i
    key = heading_key(wanted)
    for i in inside:
        if heading_key(headings[i].text) == key:
            return i
    return None


def find(text: str, note: ParsedNote, subpath: str) -> Section:
    """The section or block ``subpath`` names in ``text`` (parsed as ``note``);
    NoSuchPart when there is none."""
    lines = _LINE_BREAK.split(text.removeprefix("\ufeff"))
    if lines[-1] == "":
        lines.pop()
    total = len(lines)

    def cut(label: str, kind: str, start: int, end: int) -> Section:
        shown = "\n".join(lines[start:end]).rstrip() + "\n"
        return Section(label, kind, start, end, shown, total)

    if subpath.startswith("^"):
        block_id = subpath[1:].strip()
        found = note.blocks.get(block_id) or next(
            (b for key, b in note.blocks.items() if key.lower() == block_id.lower()), None
        )
        if found is None:
            ids = ", ".join(f"^{key}" for key in list(note.blocks)[:20]) or "none"
            raise NoSuchPart(f"no block ^{block_id} (its block ids: {ids})")
        return cut(f"^{block_id}", found.kind, found.start, found.end)
    headings = note.headings
    start, end, index = 0, total, None
    for part in (p.strip() for p in subpath.split("#")):
        if not part:
            continue
        index = _find_heading(headings, part, start, end)
        if index is None:
            listing = "; ".join(h.text for h in headings[:30]) or "none"
            raise NoSuchPart(f"no heading {part!r} (its headings: {listing})")
        start, end = headings[index].line, _section_end(headings, index, total)
    if index is None:
        raise NoSuchPart("no heading named after the #")
    return cut(headings[index].text, "heading", start, end)
