"""How an answer is shown: prose as Markdown, everything copied from a tool as it is.

A model's answer mixes its own words with text it copied: a file it read, what a command
printed, code. Markdown rendering is right for the first and ruins the second (``ls -la``
becomes one paragraph, ``__name__`` loses its underscores, ``<stdin>`` vanishes as an HTML
tag). So the answer is cut into blocks and each is shown in its own way:

- **verbatim**, line for line at the terminal's width: a fenced code block; a run of lines
  copied from a tool's output of this turn (what :meth:`Outputs.add` was given); a
  paragraph that looks preformatted (most of its lines indented, aligned in columns, a
  listing such as ``ls -l`` prints, or code);
- **Markdown** for the rest, with the model's line breaks kept (a newline is a line
  break, not a space) and ``_`` and ``<`` taken literally: identifiers and file names
  are far more common in answers than ``_emphasis_`` or HTML.

Everything here is plain text work (no rich import) except :func:`renderable`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from co_core.ui.render import visible

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")
# a paragraph is preformatted when at least this share of its lines look it
PREFORMATTED_SHARE = 0.5
LISTING = re.compile(r"^[-dlcbps][-rwxsStT]{9}[.+@]?\s")  # ls -l
# a gap between columns: two spaces or more after a word (not after a sentence's end)
GAP = re.compile(r"[^\s.!?:;,] {2,}(?=\S)")
CODE_START = re.compile(
    r"^\s*(def |class |import |from \S+ import |return\b|if .*:$|elif .*:$|else:$|for .*:$|"
    r"while .*:$|try:$|except\b.*:$|with .*:$|async def |#include\b|#!|fn |func |"
    r"function\b|const |let |var |public |private |package |using )"
)
CODE_END = re.compile(r"[{};]\s*$|^\s*[})\]]+[;,]?\s*$")
AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>|<[^\s<>@]+@[^\s<>@]+>")
CODE_SPAN = re.compile(r"(`+)(?:.+?)\1", re.DOTALL)


@dataclass(frozen=True)
class Block:
    """A piece of the answer: ``verbatim`` text is shown as it is, the rest as Markdown."""

    text: str
    verbatim: bool = False
    lang: str = ""  # a fenced block's language, for highlighting


@dataclass
class Outputs:
    """Lines of the tool outputs seen so far; an answer's line found here was copied."""

    lines: set[str] = field(default_factory=set)

    def add(self, text: str) -> None:
        for line in as_shown(text).splitlines():  # as the answer is compared: written out
            key = line.strip()
            if key:
                self.lines.add(key)

    def __contains__(self, line: object) -> bool:
        return isinstance(line, str) and line.strip() in self.lines


def split_answer(text: str, outputs: Outputs | None = None) -> list[Block]:
    """The answer cut into blocks, in order (fences left out: their block is verbatim)."""
    blocks: list[Block] = []
    lines = text.splitlines(keepends=True)
    prose: list[str] = []
    index = 0
    while index < len(lines):
        opened = FENCE.match(lines[index])
        if opened is None:
            prose.append(lines[index])
            index += 1
            continue
        blocks += _unfenced(prose, outputs)
        prose = []
        end = _fence_end(lines, index, opened.group(1))
        body = "".join(lines[index + 1 : end])
        blocks.append(Block(body, verbatim=True, lang=opened.group(2)))
        index = end + 1
    blocks += _unfenced(prose, outputs)
    return [b for b in blocks if b.text.strip()]


def _fence_end(lines: Sequence[str], start: int, fence: str) -> int:
    """The closing fence's index (``len(lines)`` while it has not streamed in yet)."""
    closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    for index in range(start + 1, len(lines)):
        if closing.match(lines[index]):
            return index
    return len(lines)


def _unfenced(lines: list[str], outputs: Outputs | None) -> list[Block]:
    """Prose lines split into copied or preformatted runs and Markdown."""
    if not lines:
        return []
    marked = [bool(outputs is not None and line.strip() and line in outputs) for line in lines]
    paragraphs = list(_paragraphs(lines))
    for start, end in paragraphs:
        if not any(marked[start:end]) and _preformatted(lines[start:end]):
            while not _looks_preformatted(lines[start]) and lines[start].rstrip().endswith(":"):
                start += 1  # "Here is the listing:" stays prose
            marked[start:end] = [True] * (end - start)
    changed = True
    while changed:  # a lone line of code ("import sys") next to a block of code joins it
        changed = False
        for start, end in paragraphs:
            if end - start == 1 and not marked[start] and _looks_preformatted(lines[start]):
                before = _nearest(lines, marked, range(start - 1, -1, -1))
                after = _nearest(lines, marked, range(end, len(lines)))
                if before or after:
                    marked[start] = changed = True
    _bridge_blank_lines(lines, marked)
    return [Block("".join(run), verbatim=flag) for flag, run in _runs(lines, marked)]


def _nearest(lines: list[str], marked: list[bool], order: range) -> bool:
    """Whether the nearest non-blank line in ``order`` is verbatim."""
    return next((marked[i] for i in order if lines[i].strip()), False)


def _bridge_blank_lines(lines: list[str], marked: list[bool]) -> None:
    """Blank lines between two verbatim lines are part of the verbatim text."""
    last = -1
    for index, flag in enumerate(marked):
        if not flag or not lines[index].strip():
            continue
        if last >= 0 and all(not lines[i].strip() for i in range(last + 1, index)):
            marked[last + 1 : index] = [True] * (index - last - 1)
        last = index


def _paragraphs(lines: list[str]) -> Iterable[tuple[int, int]]:
    start = None
    for index, line in enumerate([*lines, ""]):
        if line.strip() and start is None:
            start = index
        elif not line.strip() and start is not None:
            yield start, index
            start = None


def _preformatted(paragraph: list[str]) -> bool:
    """Most lines look like a listing, columns, indented or code: not prose."""
    if len(paragraph) < 2:
        return False
    looks = sum(1 for line in paragraph if _looks_preformatted(line.rstrip("\n")))
    return looks >= max(2, len(paragraph) * PREFORMATTED_SHARE)


def _looks_preformatted(line: str) -> bool:
    if line.lstrip().startswith("|"):
        return False  # a Markdown table row: rendered as a table
    if line.startswith(("\t", "  ")) and not re.match(r"\s*([-*+]|\d+[.)])\s", line):
        return True  # indented, and not a nested list item
    return bool(
        LISTING.match(line) or _aligned(line) or CODE_START.match(line) or CODE_END.search(line)
    )


def _aligned(line: str) -> bool:
    """Columns (``ps``, ``df``, a table of numbers): a gap of three spaces or more, or two
    gaps of two; two spaces after a full stop are a typist's habit, not a column."""
    gaps = [len(m.group()) - 1 for m in GAP.finditer(line.strip())]
    return any(gap >= 3 for gap in gaps) or len(gaps) >= 2


def _runs(lines: list[str], flags: list[bool]) -> Iterable[tuple[bool, list[str]]]:
    run: list[str] = []
    current = flags[0] if flags else False
    for line, flag in zip(lines, flags, strict=True):
        if flag != current and run:
            yield current, run
            run = []
        current = flag
        run.append(line)
    if run:
        yield current, run


def as_shown(text: str) -> str:
    """Line ends made plain (CRLF files), every other control character written out."""
    return visible(text.replace("\r\n", "\n"))


def literal_markdown(text: str) -> str:
    """Prose with ``_`` and ``<`` escaped (outside code spans and autolinks), so that
    ``__init__.py`` and ``<stdin>`` read as written."""
    out: list[str] = []
    position = 0
    for kept in _protected(text):
        out.append(_escape(text[position : kept.start()]))
        out.append(kept.group())
        position = kept.end()
    out.append(_escape(text[position:]))
    return "".join(out)


def _protected(text: str) -> list[re.Match[str]]:
    spans = sorted([*CODE_SPAN.finditer(text), *AUTOLINK.finditer(text)], key=lambda m: m.start())
    kept: list[re.Match[str]] = []
    end = -1
    for span in spans:
        if span.start() >= end:
            kept.append(span)
            end = span.end()
    return kept


def _escape(text: str) -> str:
    return re.sub(r"(?<!\\)([_<])", r"\\\1", text)


# -- rich -------------------------------------------------------------------------------


def renderable(text: str, outputs: Outputs | None = None) -> Any:
    """The answer as one rich renderable: its blocks stacked, a blank line between two
    where the answer had one. Control characters (a terminal escape in a file the model
    quotes) are written out, never sent to the terminal."""
    from rich.console import Group
    from rich.text import Text

    parts: list[Any] = []
    gap = False
    for block in split_answer(as_shown(text), outputs):  # escapes written out, not obeyed
        lines = block.text.split("\n")
        if parts and (gap or not lines[0].strip()):
            parts.append(Text(""))
        parts.append(_render(block))
        gap = len(lines) > 1 and not "".join(lines[-2:]).strip()
    return Group(*parts)


def _render(block: Block) -> Any:
    text = block.text.rstrip()
    if block.verbatim and block.lang:
        from rich.syntax import Syntax

        return Syntax(text, block.lang, word_wrap=True, background_color="default")
    if block.verbatim:
        from rich.text import Text

        return Text(text.strip("\n"), overflow="fold")
    return _prose_class()(literal_markdown(text.strip("\n")))


@functools.cache
def _prose_class() -> type:
    from rich.markdown import Markdown

    class Prose(Markdown):
        """Markdown whose line breaks stay line breaks."""

        def __init__(self, markup: str) -> None:
            super().__init__(markup)
            _hard_breaks(self.parsed)

    return Prose


def _hard_breaks(tokens: Iterable[Any]) -> None:
    for token in tokens:
        if token.type == "softbreak":
            token.type = "hardbreak"
        if token.children:
            _hard_breaks(token.children)
