"""Unicode text handling shared by the index and the search: folding, tokens, matching.

SQLite's ``unicode61`` tokenizer splits on spaces and punctuation only, so a run of CJK
characters is one token and emoji are dropped as separators. Before indexing, text is
turned into a *shadow*: each CJK run also gets its single characters and bigrams as
separate tokens, and each emoji becomes a private-use character (a token for
``unicode61``). Queries are turned into the same tokens, so FTS5 finds candidates; every
candidate is then verified against the note's real text, with word boundaries, by
:func:`term_pattern`, a regex that is case- and accent-insensitive by itself (so the
note's text is never copied or folded, and match positions are positions in the note).
:func:`fold` (case and accents off, same length) is for short keys like file names.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_CJK = (
    "\u1100-\u11ff\u3040-\u30ff\u3100-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
    "\U00020000-\U0003134f"
)
CJK_CHAR = re.compile(f"[{_CJK}]")
_CJK_RUN = re.compile(f"[{_CJK}]+")
# Emoji and other pictographs: symbol blocks outside the BMP plus the common BMP ones.
_EMOJI = re.compile("[\u2190-\u21ff\u2300-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]")
_SHADOWED = re.compile(f"[{_CJK}{_EMOJI.pattern[1:-1]}]+")  # one class: one test per char
_PUA = 0xF0000
_TOKEN = re.compile(r"[^\W_]+|[\U000f0000-\U000ffffd]")
_QUERY_PART = re.compile(r'"([^"]*)"?|(\S+)')


class _Fold(dict[int, str]):
    """Per-character fold (lower case, accents removed) that never changes the length."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        parts = unicodedata.normalize("NFD", char)
        base = parts[0].lower()
        # only accents come off: Hangul syllables decompose into letters, and stay whole
        if len(base) != 1 or not all(unicodedata.combining(c) for c in parts[1:]):
            base = char.lower() if len(char.lower()) == 1 else char
        self[code] = base
        return base


_FOLD = _Fold()


def fold(text: str) -> str:
    """Lower case without accents, same length as ``text`` (positions stay valid)."""
    if text.isascii():
        return text.lower()
    return text.translate(_FOLD)


def _cjk_tokens(match: re.Match[str]) -> str:
    run = match.group()
    grams = [run[i : i + 2] for i in range(len(run) - 1)]
    return " " + " ".join([*run, *grams]) + " "


def _emoji_token(match: re.Match[str]) -> str:
    return f" {chr(_PUA + ord(match.group()) % 0xFFFD)} "


def shadow(text: str) -> str:
    """The text FTS5 indexes: NFC, CJK split into characters and bigrams, emoji as tokens."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", text)
    # The regex costs ~20 ns a character; most lines have nothing from U+1000 up, and
    # bytes.translate finds that out at C speed (UTF-8 lead bytes >= 0xE1).
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if not line.isascii() and line.encode("utf-8", "surrogatepass").translate(None, _LOW):
            lines[number] = _SHADOWED.sub(_shadow_part, line)
    return "\n".join(lines)


_LOW = bytes(range(0xE1))


def _shadow_part(match: re.Match[str]) -> str:
    run = match.group()
    if not _EMOJI.search(run):
        return _cjk_tokens(match)
    return _CJK_RUN.sub(_cjk_tokens, _EMOJI.sub(_emoji_token, run))


def tokens(term: str) -> list[str]:
    """FTS5 tokens that any text containing ``term`` must also contain."""
    term = unicodedata.normalize("NFC", term)
    found: list[str] = []
    pos = 0
    for run in _CJK_RUN.finditer(term):
        found += _TOKEN.findall(_EMOJI.sub(_emoji_token, term[pos : run.start()]))
        chars = run.group()
        found += [chars] if len(chars) == 1 else [chars[i : i + 2] for i in range(len(chars) - 1)]
        pos = run.end()
    found += _TOKEN.findall(_EMOJI.sub(_emoji_token, term[pos:]))
    return found


@dataclass(frozen=True)
class Query:
    """A parsed search: each term (a word or a quoted phrase) must occur in the note."""

    text: str
    terms: tuple[str, ...]

    @property
    def patterns(self) -> list[re.Pattern[str]]:
        return [term_pattern(t) for t in self.terms]

    def fts(self) -> str | None:
        """The FTS5 MATCH expression, or None if nothing is indexable. A term without CJK,
        or one CJK run, is a phrase (its tokens are adjacent in the shadow text); a mixed
        term is an AND of its tokens. Either way hits are verified against the text."""
        parts: list[str] = []
        for term in self.terms:
            toks = tokens(term)
            if not toks:
                continue
            if not CJK_CHAR.search(term) or _CJK_RUN.fullmatch(term):
                parts.append(_quote(" ".join(toks)))
            else:
                parts += [_quote(t) for t in dict.fromkeys(toks)]
        return " AND ".join(dict.fromkeys(parts)) or None


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def parse_query(text: str) -> Query:
    """``budget "weekly review" 東京`` -> terms budget, weekly review, 東京."""
    terms: list[str] = []
    for phrase, word in _QUERY_PART.findall(text):
        term = " ".join((phrase or word).split())
        if term:
            terms.append(term)
    return Query(text, tuple(dict.fromkeys(terms)))


def _is_word(char: str) -> bool:
    return (char.isalnum() or char == "_") and not CJK_CHAR.match(char)


def _latin_variants() -> dict[str, str]:
    """a -> "aàáâãäå...": every Latin letter that folds to a base letter."""
    groups: dict[str, list[str]] = {}
    for code in [*range(0xC0, 0x250), *range(0x1E00, 0x1F00)]:
        char = chr(code)
        base = fold(char)
        if base.isascii() and base.isalpha() and base != char.lower():
            groups.setdefault(base, []).append(char.lower())
    return {base: base + "".join(dict.fromkeys(chars)) for base, chars in groups.items()}


_VARIANTS = _latin_variants()
_MARKS = "[\u0300-\u036f]"


def _char_pattern(char: str) -> tuple[str, str]:
    """(pattern for the character, pattern for accents that may follow it)."""
    base = fold(char)
    if base in _VARIANTS:
        return f"[{_VARIANTS[base]}]", f"{_MARKS}*+"
    return re.escape(char), ""


def term_pattern(term: str) -> re.Pattern[str]:
    """A case-insensitive regex over a note's *original* text for ``term``: accents optional
    on Latin letters (precomposed or combining), word boundaries where the term has word
    characters at its edges (none at CJK edges: CJK has no spaces between words)."""
    parts = unicodedata.normalize("NFC", term).split()
    chars = [[_char_pattern(c) for c in part] for part in parts]
    if _is_word(parts[0][0]):
        # checked after the first character matched, so the regex engine can skip ahead
        # to candidates for that character instead of testing a lookbehind everywhere
        char, marks = chars[0][0]
        chars[0][0] = (char + rf"(?<![^\W_].)(?<!{_MARKS}.)", marks)
    body = r"\s+".join("".join(c + m for c, m in part) for part in chars)
    right = r"(?![^\W_])" if _is_word(parts[-1][-1]) else ""
    return re.compile(body + right, re.IGNORECASE)


def matches_note(name: str, text: str, patterns: list[re.Pattern[str]]) -> bool:
    """Every term occurs in the note's file name (without .md) or in its text: what the
    index finds (the name is in its title column, folders are not; a phrase does not run
    from the name into the text)."""
    return all(p.search(name) or p.search(text) for p in patterns)


# Latin-1 letters with accents are two bytes in UTF-8, C3 then 80-BF. Deleting C3 and
# mapping the second byte to the letter's base ("é" = C3 A9 -> "e") strips those accents
# at C speed. Other lead bytes become spaces; the second bytes of other characters turn
# into stray letters, which can only make the prefilter say "maybe" more often.
_LATIN1_TABLE = bytearray(range(256))
for _byte in range(0x80, 0xC0):
    _base = fold(chr(_byte + 0x40))
    _LATIN1_TABLE[_byte] = ord(_base) if _base.isascii() and _base.isalpha() else 0x20
for _byte in range(0xC0, 0x100):
    _LATIN1_TABLE[_byte] = 0x20
_LATIN1_TABLE = bytes(_LATIN1_TABLE)
# Lead bytes of other accented Latin (U+0100-U+024F), combining accents (U+0300-U+036F)
# and Latin Extended Additional (U+1E00-U+1EFF): for those, Unicode NFD does the work.
_OTHER_ACCENTS_3 = (b"\xe1\xb8", b"\xe1\xb9", b"\xe1\xba", b"\xe1\xbb")


def ascii_view(data: bytes) -> bytes:
    """UTF-8 text lower-cased with accents off and other scripts blurred: where a word's
    accent-free spelling occurs in the text, it occurs in this view."""
    if data.isascii():
        return data.lower()
    if (  # unrolled: a generator here costs more than the eight memchr scans
        b"\xc4" in data
        or b"\xc5" in data
        or b"\xc6" in data
        or b"\xc7" in data
        or b"\xc8" in data
        or b"\xc9" in data
        or b"\xcc" in data
        or b"\xcd" in data
        or (b"\xe1" in data and any(b in data for b in _OTHER_ACCENTS_3))
    ):
        decomposed = unicodedata.normalize("NFD", data.decode("utf-8", "replace"))
        return decomposed.encode("ascii", "ignore").lower()
    return data.translate(_LATIN1_TABLE, b"\xc3").lower()


class Prefilter:
    """A cheap necessary condition for a query, tested on a note's raw bytes with C-speed
    substring searches, so a search without an index skips most notes without decoding
    them. Accent-insensitive words are looked for in :func:`ascii_view`; caseless words
    (CJK, emoji) as bytes; words in other cased scripts in the lower-cased text."""

    def __init__(self, query: Query) -> None:
        self.ascii: list[bytes] = []
        self.exact: list[bytes] = []
        self.cased: list[str] = []
        for term in query.terms:
            for word in term.split():
                decomposed = unicodedata.normalize("NFD", word)
                composed = unicodedata.normalize("NFC", word)
                if all(c.isascii() or unicodedata.combining(c) for c in decomposed):
                    self.ascii.append(decomposed.encode("ascii", "ignore").lower())
                elif composed.lower() == composed == composed.upper():
                    self.exact.append(composed.encode("utf-8"))
                else:
                    self.cased.append(composed.lower())

    def may_match(self, data: bytes) -> bool:
        if self.ascii:
            view = ascii_view(data)
            if not all(needle in view for needle in self.ascii):
                return False
        if not all(needle in data for needle in self.exact):
            return False
        if self.cased:
            text = data.decode("utf-8", "replace")
            if b"\xcc" in data or b"\xcd" in data:  # combining accents: compose first
                text = unicodedata.normalize("NFC", text)
            text = text.lower()
            return all(needle in text for needle in self.cased)
        return True


def snippet(text: str, patterns: list[re.Pattern[str]], width: int = 160) -> str:
    """The part of ``text`` around its best match: the window holding the most distinct
    terms, earliest first; matches in **bold**, whitespace collapsed."""
    hits: list[tuple[int, int, int]] = []  # start, end, term index
    if len(patterns) == 1:  # the window is around the first match: read no further
        first = patterns[0].search(text)
        if first is not None:
            # a match is marked if it ends inside the window; to end there it needs the
            # character after it (its right edge), so the search stops one past the window
            hits.append((first.start(), first.end(), 0))
            stop = min(len(text), max(0, first.start() - width // 3) + width + 1)
            for count, m in enumerate(patterns[0].finditer(text, first.end(), stop), 1):
                hits.append((m.start(), m.end(), 0))
                if count >= 50:
                    break
    else:
        for index, pattern in enumerate(patterns):
            for count, m in enumerate(pattern.finditer(text)):
                hits.append((m.start(), m.end(), index))
                if count >= 50:
                    break
    if not hits:
        return _collapse(text[:width]) + ("…" if len(text) > width else "")
    hits.sort()
    best, best_score = hits[0][0], -1
    # windows starting at each of the first 200 matches, slid along: terms in the window
    # counted as matches enter and leave (a window starting where the previous one did
    # holds the same terms, and the earlier one wins ties anyway)
    in_window: dict[int, int] = {}
    end = 0
    for start, _end, term in hits[:200]:
        while end < len(hits) and hits[end][0] < start + width:
            in_window[hits[end][2]] = in_window.get(hits[end][2], 0) + 1
            end += 1
        if len(in_window) > best_score:
            best, best_score = start, len(in_window)
        if in_window[term] == 1:
            del in_window[term]
        else:
            in_window[term] -= 1
    lo = max(0, best - width // 3)
    hi = min(len(text), lo + width)
    marks = sorted((s, e) for s, e, _ in hits if lo <= s and e <= hi)
    out, pos = [], lo
    for s, e in marks:
        if s < pos:
            continue
        out += [text[pos:s], "**", text[s:e], "**"]
        pos = e
    out.append(text[pos:hi])
    return ("…" if lo > 0 else "") + _collapse("".join(out)) + ("…" if hi < len(text) else "")


def _collapse(text: str) -> str:
    return " ".join(text.split())
