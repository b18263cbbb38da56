"""Unicode text handling shared by the index and the search: folding, tokens, matching.

Search rules (see docs/obsidian.md, *Search rules*):

- Case never matters. Accents are optional on Latin and Greek letters (``cafe`` finds
  ``café``, ``σημειωσεις`` finds ``σημειώσεις``), and Russian ``ё`` is the same letter
  as ``е`` (Russian is usually written without the dots). Other letters with marks are
  letters of their own and stay distinct: ``й`` is not ``и``, ``ł`` is not ``l``,
  ``ß`` is not ``ss``.
- Words in scripts written without spaces (Chinese, Japanese, Korean, Thai, Lao, Khmer,
  Burmese) match anywhere in the text, as ripgrep finds them; so do emoji. Words in
  other scripts match as whole words.

SQLite's ``unicode61`` tokenizer splits on spaces and punctuation only, drops the vowel
marks of Thai and the like, keeps Greek accents and drops emoji. So the index is given a
*shadow* of each note: Greek accents and ``ё`` folded, and every character of the
spaceless scripts (and every emoji) turned into a private-use character, once alone and
once paired with the next one. A query goes through the same transformation, so FTS5
finds candidates; every candidate is then checked against the note's real text (in NFC)
by :func:`term_pattern`, a regex that applies the rules above by itself.
"""

from __future__ import annotations

import operator
import re
import unicodedata
from dataclasses import dataclass

# Scripts written without spaces between words, with the CJK symbols used inside words
# (々 〆 〇 〻, kana repeat marks, halfwidth katakana), and emoji.
_SPACELESS_RANGES = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f\ua9e0-\ua9ff\uaa60-\uaa7f"  # Myanmar (Burmese)
    "\u1100-\u11ff\ua960-\ua97f\uac00-\ud7ff\u3130-\u318f"  # Hangul
    "\u1780-\u17ff\u19e0-\u19ff"  # Khmer
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u303c"  # CJK radicals, symbols
    "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # kana
    "\u3100-\u312f\u31a0-\u31bf\u3190-\u319f\u31c0-\u31ef"  # Bopomofo, Kanbun, strokes
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"  # ideographs
    "\u2190-\u21ff\u2300-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff"  # arrows, symbols, emoji
)
SPACELESS = re.compile(f"[{_SPACELESS_RANGES}]")
_SPACELESS_RUN = re.compile(f"[{_SPACELESS_RANGES}]+")
_PUA = 0xF0000  # Supplementary Private Use Area-A: a token character for unicode61
_TOKEN = re.compile(r"[^\W_]+|[\U000f0000-\U000ffffd]")
_QUERY_PART = re.compile(r'"([^"]*)"?|(\S+)')
_PLAIN_WORD = re.compile(r"[^\W_]+")
# combining diacritical marks, but U+0345 (Greek iota below), which IGNORECASE takes for ι
_MARKS = "\u0300-\u0344\u0346-\u036f"


def _folds_marks(code: int) -> bool:
    """Latin and Greek letters lose their accents in a search."""
    return (
        0x41 <= code <= 0x24F
        or 0x1E00 <= code <= 0x1EFF
        or 0x370 <= code <= 0x3FF
        or 0x1F00 <= code <= 0x1FFF
    )


def _fold_char(char: str) -> str:
    lower = char.lower()
    if len(lower) != 1:
        lower = char
    if lower == "ё":
        return "е"
    if lower == "ς":
        return "σ"
    if _folds_marks(ord(char)):
        parts = unicodedata.normalize("NFD", char)
        if len(parts) > 1 and all(unicodedata.combining(c) for c in parts[1:]):
            base = parts[0].lower()
            if len(base) == 1:
                return base
    return lower


class _Fold(dict[int, str]):
    def __missing__(self, code: int) -> str:
        self[code] = folded = _fold_char(chr(code))
        return folded


_FOLD = _Fold()


def fold(text: str) -> str:
    """Lower case without the accents a search ignores; same length as ``text``."""
    if text.isascii():
        return text.lower()
    return text.translate(_FOLD)


def name_key(name: str) -> str:
    """How Obsidian compares note names and paths: any case, NFC = NFD, accents kept."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).lower())


def title_key(text: str) -> str:
    """A title or a whole query as a search compares them: folded, spaces collapsed."""
    return " ".join(fold(unicodedata.normalize("NFC", text)).split())


def _variants() -> dict[str, str]:
    """a -> "aàáâ…": every Latin or Greek letter (and ё) that a search folds to a base."""
    groups: dict[str, list[str]] = {}
    codes = [*range(0xC0, 0x250), *range(0x1E00, 0x1F00), *range(0x370, 0x400)]
    for code in [*codes, *range(0x1F00, 0x2000), ord("ё"), ord("Ё"), ord("ς")]:
        char = chr(code)
        lower = char.lower()
        base = fold(char)
        if len(lower) == 1 and base != lower and base.isalpha():
            groups.setdefault(base, []).append(lower)
    return {base: base + "".join(dict.fromkeys(chars)) for base, chars in groups.items()}


VARIANTS = _variants()
# What the shadow folds itself: unicode61 removes Latin accents already (all but on ǡ),
# but not Greek ones, nor the dots of ё, nor final sigma
_SHADOW_FOLD_MAP = {
    c: fold(c)
    for variants in VARIANTS.values()
    for c in variants + variants.upper()
    if len(c) == 1 and fold(c) != c.lower() and (ord(c) >= 0x370 and not 0x1E00 <= ord(c) < 0x1F00)
}
_SHADOW_FOLD_MAP.update({"ς": "σ", "ǡ": "a", "Ǡ": "a"})
_SHADOW_FOLD = re.compile("[" + "".join(sorted(_SHADOW_FOLD_MAP)) + "]")


class _Pua(dict[int, str]):
    """A character of a spaceless script (or an emoji) -> its private-use token character."""

    def __missing__(self, code: int) -> str:
        self[code] = token = chr(_PUA + code % 0xFFFE)
        return token


_TO_PUA = _Pua()


def _spaceless_tokens(match: re.Match[str]) -> str:
    run = match.group().translate(_TO_PUA)
    pairs = " ".join(map(operator.add, run, run[1:]))
    return f" {' '.join(run)} {pairs} "


# Which lines need the slow work, found from their UTF-8 bytes at C speed (a regex costs
# ~30 ns for every character it looks at): characters of the spaceless scripts and emoji
# are U+0800 and up, whose lead bytes are 0xE0 and up; what the shadow folds has one of
# the lead bytes that _NOT_FOLDED leaves (Greek, Cyrillic, ǡ).
_BELOW_E0 = bytes(range(0xE0))
_NOT_FOLDED = bytes(b for b in range(256) if b not in b"\xc7\xcd\xce\xcf\xd0\xd1\xe1")


def _fold_for_index(text: str) -> str:
    return _SHADOW_FOLD.sub(lambda m: _SHADOW_FOLD_MAP[m.group()], text)


def shadow(text: str) -> str:
    """The text FTS5 indexes for ``text`` (see the module docstring)."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", text)
    data = text.encode("utf-8", "surrogatepass")
    if data.translate(None, _NOT_FOLDED):
        text = _fold_for_index(text)
    if not data.translate(None, _BELOW_E0):
        return text
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if not line.isascii() and line.encode("utf-8", "surrogatepass").translate(None, _BELOW_E0):
            lines[number] = _SPACELESS_RUN.sub(_spaceless_tokens, line)
    return "\n".join(lines)


def tokens(term: str) -> list[str]:
    """FTS5 tokens that the shadow of any text containing ``term`` also contains."""
    term = _fold_for_index(unicodedata.normalize("NFC", term))
    found: list[str] = []
    pos = 0
    for match in _SPACELESS_RUN.finditer(term):
        found += _TOKEN.findall(term[pos : match.start()])
        run = match.group().translate(_TO_PUA)
        found += list(run) if len(run) == 1 else list(map(operator.add, run, run[1:]))
        pos = match.end()
    found += _TOKEN.findall(term[pos:])
    return found


@dataclass(frozen=True)
class Query:
    """A parsed search: each term (a word or a quoted phrase) must occur in the note."""

    text: str
    terms: tuple[str, ...]

    @property
    def patterns(self) -> list[re.Pattern[str]]:
        return [term_pattern(t) for t in self.terms]

    @property
    def index_exact(self) -> bool:
        """Does the index find exactly the notes that match (every term a plain word of
        a script written with spaces, which FTS5 matches as the rules do)?"""
        return all(
            _PLAIN_WORD.fullmatch(term) and not SPACELESS.search(term) for term in self.terms
        )

    @property
    def title(self) -> str:
        """The query as a note title would be compared to it (see :func:`title_key`)."""
        return title_key(" ".join(self.terms))

    def fts(self) -> str | None:
        """The FTS5 MATCH expression, or None if nothing is indexable. A term without
        spaceless characters, or one run of them, is a phrase (its tokens are adjacent in
        the shadow); a mixed term is an AND of its tokens. Hits are verified anyway."""
        parts: list[str] = []
        for term in self.terms:
            toks = tokens(term)
            if not toks:
                continue
            if not SPACELESS.search(term) or _SPACELESS_RUN.fullmatch(term):
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


def is_word_char(char: str) -> bool:
    """A character of a word that needs word edges (not of a spaceless script)."""
    return (char.isalnum() or char == "_") and not SPACELESS.match(char)


def _char_pattern(char: str) -> tuple[str, str]:
    """(pattern for the character, pattern for accents that may follow it)."""
    base = fold(char)
    if base in VARIANTS:
        return f"[{VARIANTS[base]}]", f"[{_MARKS}]*+"
    return re.escape(char), ""


def term_pattern(term: str) -> re.Pattern[str]:
    """A case-insensitive regex over a note's NFC text for ``term``, applying the search
    rules: accents optional where a search folds them, word edges where the term starts
    or ends with a letter of a script that has spaces."""
    parts = unicodedata.normalize("NFC", term).split()
    chars = [[_char_pattern(c) for c in part] for part in parts]
    if is_word_char(parts[0][0]):
        # checked after the first character matched, so the regex engine can skip ahead
        # to candidates for that character instead of testing a lookbehind everywhere
        char, marks = chars[0][0]
        chars[0][0] = (char + rf"(?<![^\W_].)(?<![{_MARKS}].)", marks)
    body = r"\s+".join("".join(c + m for c, m in part) for part in chars)
    right = rf"(?![^\W_]|[{_MARKS}])" if is_word_char(parts[-1][-1]) else ""
    return re.compile(body + right, re.IGNORECASE)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def matches_note(name: str, text: str, patterns: list[re.Pattern[str]]) -> bool:
    """Every term occurs in the note's file name (without .md) or in its text (both NFC):
    what the index finds (the name is in its title column, folders are not; a phrase
    does not run from the name into the text)."""
    return all(p.search(name) or p.search(text) for p in patterns)


_OWN_BOLD = re.compile(r"\*{2,}")


def snippet(text: str, patterns: list[re.Pattern[str]], width: int = 160) -> str:
    """The part of ``text`` around its best match: the window holding the most distinct
    terms, earliest first; matches in **bold** (the note's own ``**`` markers are left
    out, so every pair of them in a snippet is a match), whitespace collapsed."""
    hits: list[tuple[int, int, int]] = []  # start, end, term index
    for index, pattern in enumerate(patterns):
        for count, m in enumerate(pattern.finditer(text)):
            hits.append((m.start(), m.end(), index))
            if count >= 50:
                break
    if not hits:
        return _plain(text[:width]) + ("…" if len(text) > width else "")
    hits.sort()
    best, best_score = hits[0][0], -1
    # windows starting at each of the first 200 matches, slid along: terms in the window
    # are counted as matches enter and leave it; the earlier window wins ties
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
    out: list[str] = []
    pos = lo
    for s, e in marks:
        if s < pos:
            continue
        out += [_unmarked(text[pos:s], after=bool(out), before=True), "**", text[s:e], "**"]
        pos = e
    out.append(_unmarked(text[pos:hi], after=bool(out), before=False))
    return ("…" if lo > 0 else "") + _collapse("".join(out)) + ("…" if hi < len(text) else "")


def _unmarked(part: str, after: bool, before: bool) -> str:
    """Text between matches without the note's own bold markers (nor a single ``*``
    touching a match, which would run into the match's marker)."""
    part = _OWN_BOLD.sub("", part)
    if after and part.startswith("*"):
        part = part[1:]
    if before and part.endswith("*"):
        part = part[:-1]
    return part


def _plain(text: str) -> str:
    return _collapse(_OWN_BOLD.sub("", text))


def _collapse(text: str) -> str:
    return " ".join(text.split())
