"""Obsidian's Markdown: CommonMark (markdown-it-py) with Obsidian's own extensions as
small plugins of that parser. See docs/obsidian.md, *How notes are read*, for the rules
and where they come from.

The parser is CommonMark with GFM tables and strikethrough, YAML front matter, footnotes
and ``$…$`` / ``$$…$$`` math (mdit-py-plugins). Obsidian's extensions add these inline
tokens, each with ``meta`` saying what it holds:

- ``wikilink``: ``[[target|shown]]`` and ``![[embed]]`` (``meta["inner"]``, ``["embed"]``);
- ``obsidian_tag``: ``#tag`` where Obsidian sees a tag (``meta["tag"]``);
- ``block_id``: `` ^id`` closing a block (``meta["id"]``);
- ``obsidian_comment``: ``%%…%%``, hidden; a comment left open runs on into the next
  blocks until a ``%%`` closes it.

Obsidian reads ``[[…]]`` before the code spans around it: a backtick inside a wikilink
neither opens nor closes a code span (``[[Functions#hasTag|`hasTag`]]`` and
``[[#`move`|move]]`` are links), while a wikilink inside a real code span is code.

A blockquote opening with ``[!type]`` is a callout: its ``blockquote_open`` token gets
``meta["callout"]``. Markdown links and images keep the text they were written as in
``meta["raw"]``. Inline parsing is skipped for text that holds none of ``#``, ``[``,
``^``, ``%`` (nothing Co reads can be there), but for headings, whose text Co keeps.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.backticks import backtick
from markdown_it.rules_inline.image import image
from markdown_it.rules_inline.link import link
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin


def _cjk_punctuation() -> str:
    """The CJK punctuation a tag ends at, as Obsidian ends ``#tag。`` at ``。``: every
    punctuation mark of the CJK symbol, katakana, vertical, compatibility, small and
    fullwidth/halfwidth form blocks, and the fullwidth forms of the ASCII symbols a tag
    ends at (``＄`` ``＋`` ``＜`` ``＝`` ``＞`` ``＾`` ``｀`` ``｜`` ``～``). Letters there
    (``々`` ``ー`` ``〇``, fullwidth ``Ａ``, halfwidth ``ｶ``) stay tag characters."""
    blocks = [(0x3000, 0x303F), (0x30A0, 0x30FF), (0xFE10, 0xFE1F), (0xFE30, 0xFE6F)]
    blocks.append((0xFF00, 0xFFEF))
    found = []
    for first, last in blocks:
        for point in range(first, last + 1):
            char = chr(point)
            category = unicodedata.category(char)
            ascii_form = unicodedata.normalize("NFKC", char)
            symbol = category.startswith("S") and ascii_form in "$+<=>^`|~"
            if category.startswith("P") or symbol:
                found.append(char)
    return "".join(found)


# A tag's characters: anything but whitespace, ASCII punctuation other than - _ /, and
# the general-punctuation blocks U+2000-206F and U+2E00-2E7F (Obsidian's own pattern,
# as Dataview and other readers of Obsidian's syntax copy it), nor CJK punctuation
# (``#タグ。`` is ``タグ``); not digits alone.
CJK_PUNCTUATION = _cjk_punctuation()
TAG_BODY = re.compile(
    r"[^\u2000-\u206F\u2E00-\u2E7F'!\"#$%&()*+,.:;<=>?@^`{|}~\[\]\\\s"
    + re.escape(CJK_PUNCTUATION)
    + "]+"
)
_NOT_DIGIT = re.compile(r"[^0-9]")
_BLOCK_ID = re.compile(r"\^([A-Za-z0-9-]+)[ \t]*")
_CALLOUT = re.compile(r"\[!([^\]\n]+)\]([+-]?)")
_WANTS_INLINE = re.compile(r"[#\[^%]")
_COMMENT_OPEN = "obsidian_comment_open"
_TAG_END = "obsidian_tag_end"
_UNDERSCORE = ord("_")
_BEFORE_TAG = "_*(\uff08"  # emphasis marks, and ( and its fullwidth form
_WIKILINK_SPAN = re.compile(r"!?\[\[[^\[\]\n]+?\]\]")
_HIDDEN_TICK = "\x00"  # a backtick inside a wikilink, as the code span rule sees it


def is_tag(body: str) -> bool:
    """Is ``body`` (without ``#``) a whole tag as Obsidian writes one?"""
    return TAG_BODY.fullmatch(body) is not None and _NOT_DIGIT.search(body) is not None


def _comment(state: StateInline, silent: bool) -> bool:
    """``%%…%%``; at the start of a block, the rest of a comment left open before it."""
    src, pos = state.src, state.pos
    opened = pos == 0 and state.env.get(_COMMENT_OPEN, False)
    if not opened and not src.startswith("%%", pos):
        return False
    start = pos if opened else pos + 2
    end = src.find("%%", start, state.posMax)
    if not silent:
        token = state.push("obsidian_comment", "", 0)
        token.content = src[start : state.posMax if end < 0 else end]
        state.env[_COMMENT_OPEN] = end < 0
    state.pos = state.posMax if end < 0 else end + 2
    return True


def _wikilink(state: StateInline, silent: bool) -> bool:
    """``[[inner]]`` and ``![[inner]]``: no brackets nor line breaks inside."""
    src, pos = state.src, state.pos
    embed = src.startswith("!", pos)
    start = pos + 1 if embed else pos
    if not src.startswith("[[", start):
        return False
    end = src.find("]]", start + 2, state.posMax)
    if end < 0:
        return False
    inner = src[start + 2 : end]
    if not inner or "[" in inner or "]" in inner or "\n" in inner:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = inner
        token.meta = {"inner": inner, "embed": embed}
    state.pos = end + 2
    return True


def _code_span(state: StateInline, silent: bool) -> bool:
    """CommonMark's code span, with every wikilink's backticks hidden from it: Obsidian
    reads ``[[…]]`` first, so ``[[A|`b`]]`` is a link and `` `x [[A]] y` `` is code."""
    src = state.src
    if src[state.pos] != "`" or "[[" not in src:
        return backtick(state, silent)
    masked = state.env.get(_HIDDEN_TICK)
    if masked is None or masked[0] is not src:
        hidden = _WIKILINK_SPAN.sub(lambda m: m.group().replace("`", _HIDDEN_TICK), src)
        masked = state.env[_HIDDEN_TICK] = (src, hidden)
    if masked[1] == src:
        return backtick(state, silent)
    count = len(state.tokens)
    state.src = masked[1]
    try:
        found = backtick(state, silent)
    finally:
        state.src = src
    for token in state.tokens[count:]:
        token.content = token.content.replace(_HIDDEN_TICK, "`")
    return found


def _tag(state: StateInline, silent: bool) -> bool:
    """``#tag`` at a line's start, after whitespace, an opening parenthesis (``(#x)``,
    ``（#x）``), an emphasis marker (``_#x_``, ``snake_#x``, ``*#x*``) or right after
    another tag (``#a#b``); not after other punctuation (``[#x``, ``"#x``, ``.#x``) nor
    inside a word (``a#x``)."""
    src, pos = state.src, state.pos
    if src[pos] != "#":
        return False
    if pos > 0:
        before = src[pos - 1]
        after_tag = state.env.get(_TAG_END) == (id(src), pos)
        if not (before.isspace() or before in _BEFORE_TAG or after_tag):
            return False
    m = TAG_BODY.match(src, pos + 1, state.posMax)
    if m is None:
        return False
    body = m.group()
    if body.endswith("_") and _emphasis_open(state):
        body = body.rstrip("_")  # `_#tag_`: the last `_` closes the emphasis
    if _NOT_DIGIT.search(body) is None:
        return False
    end = pos + 1 + len(body)
    if not silent:
        token = state.push("obsidian_tag", "", 0)
        token.content = body
        token.meta = {"tag": body}
        state.env[_TAG_END] = (id(src), end)
    state.pos = end
    return True


def _emphasis_open(state: StateInline) -> bool:
    """Is the last ``_`` run before here one that opens emphasis and cannot close it?"""
    for delimiter in reversed(state.delimiters):
        if delimiter.marker == _UNDERSCORE:
            return delimiter.open and not delimiter.close
    return False


def _block_id(state: StateInline, silent: bool) -> bool:
    """`` ^id`` ending a block: Latin letters, digits and dashes, after whitespace (or
    alone on its line)."""
    src, pos = state.src, state.pos
    if src[pos] != "^" or (pos > 0 and not src[pos - 1].isspace()):
        return False
    m = _BLOCK_ID.fullmatch(src, pos, state.posMax)
    if m is None:
        return False
    if not silent:
        token = state.push("block_id", "", 0)
        token.content = m.group(1)
        token.meta = {"id": m.group(1)}
    state.pos = state.posMax
    return True


def _keep_raw(rule: Callable[[StateInline, bool], bool]) -> Callable[[StateInline, bool], bool]:
    """A link or image rule that also records the text it read (``meta["raw"]``)."""

    def wrapped(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        if not rule(state, silent):
            return False
        if not silent:
            for token in state.tokens[count:]:
                if token.type in ("link_open", "image"):
                    token.meta = {**(token.meta or {}), "raw": state.src[start : state.pos]}
                    break
        return True

    return wrapped


def _lazy_inline(state: StateCore) -> None:
    """Parse the inline content of blocks that may hold what Co reads (and of headings,
    whose text is shown); leave the rest as it is."""
    parse = state.md.inline.parse
    tokens = state.tokens
    for index, token in enumerate(tokens):
        if token.type != "inline":
            continue
        heading = index > 0 and tokens[index - 1].type == "heading_open"
        if (
            heading
            or state.env.get(_COMMENT_OPEN)
            or _WANTS_INLINE.search(token.content) is not None
        ):
            token.children = []
            parse(token.content, state.md, state.env, token.children)


def _callouts(state: StateCore) -> None:
    """``> [!type]±`` opening a blockquote makes it a callout."""
    tokens = state.tokens
    for index, token in enumerate(tokens[:-2]):
        if token.type != "blockquote_open" or tokens[index + 1].type != "paragraph_open":
            continue
        m = _CALLOUT.match(tokens[index + 2].content)
        if m:
            token.meta = {**(token.meta or {}), "callout": m.group(1).strip().lower()}


def obsidian_plugin(md: MarkdownIt) -> None:
    """Obsidian's extensions (see the module docstring)."""
    inline = md.inline.ruler
    inline.before("text", "obsidian_comment", _comment)
    inline.at("backticks", _code_span)
    inline.before("link", "wikilink", _wikilink)
    inline.before("link", "obsidian_tag", _tag)
    inline.before("link", "block_id", _block_id)
    inline.at("link", _keep_raw(link))
    inline.at("image", _keep_raw(image))
    md.core.ruler.at("inline", _lazy_inline)
    md.core.ruler.after("block", "obsidian_callouts", _callouts)


def make_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.use(front_matter_plugin).use(footnote_plugin)
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True)
    md.use(obsidian_plugin)
    return md


_PARSER: MarkdownIt | None = None


def parse(text: str) -> tuple[list[Any], dict[str, Any]]:
    """The tokens of ``text`` (and the parse's env), with one parser for the process."""
    global _PARSER
    if _PARSER is None:
        _PARSER = make_parser()
    env: dict[str, Any] = {}
    return _PARSER.parse(text, env), env
