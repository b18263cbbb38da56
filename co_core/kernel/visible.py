"""Text that shows what it is: characters a reader cannot see, written out.

A terminal acts on some characters instead of showing them (escape sequences, carriage
returns, bidi overrides that reorder a line, zero-width characters that hide a letter),
and a permission key that flattens a newline into a space names two commands at once.
Both problems have one answer: such a character is written as an escape (``\\n``,
``\\x1b``, ``\\u202e``).

- :func:`key_text` is how a value stands in a permission key. It is exact: different
  values never give the same key (:func:`key_value` reads a key back), so an "always" for
  one command can never cover another.
- :func:`on_screen` is how any text from a model, a tool, a file or an MCP server is
  printed; it also marks file names that mix look-alike scripts (``rеport.txt`` with a
  Cyrillic ``е`` is shown as ``r\\u0435port.txt``).
"""

from __future__ import annotations

import re
import unicodedata

_SIMPLE = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_READ_BACK = {"n": "\n", "t": "\t", "r": "\r"}
# After a backslash these letters start an escape, so a backslash before them is doubled.
_ESCAPE_LETTERS = frozenset("\\ntrxuU")
# Shown as nothing, or as blank space, though they are letters or marks: fillers,
# variation selectors, the combining grapheme joiner.
_BLANK = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0]
    + list(range(0xFE00, 0xFE10))
    + list(range(0xE0100, 0xE01F0))
)
# Controls (C0, DEL, C1), formatting characters (bidi, zero-width), line and paragraph
# separators, unassigned and private code points, lone surrogates.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cn", "Co", "Cs"})
_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ASCII_CONTROL_BUT_NEWLINE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def unseen(ch: str) -> bool:
    """A character a reader cannot see for what it is (newline and tab included)."""
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return True
    if code < 0x7F:
        return False
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES or code in _BLANK


def escaped(ch: str) -> str:
    """The escape a character is written as: ``\\n``, ``\\x1b``, ``\\u202e``, ``\\U000e0001``."""
    if ch in _SIMPLE:
        return _SIMPLE[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def key_text(value: str) -> str:
    """``value`` as it stands in a permission key: every unseen character escaped, and a
    backslash doubled where it would otherwise read as the start of an escape (so
    ``printf 'a\\nb'`` and a two-line command get different keys); other text as it is."""
    if value.isascii() and _ASCII_CONTROL.search(value) is None and "\\" not in value:
        return value
    out = []
    last = len(value) - 1
    for i, ch in enumerate(value):
        if ch == "\\":
            after = value[i + 1] if i < last else ""
            out.append("\\\\" if after and (after in _ESCAPE_LETTERS or unseen(after)) else "\\")
        elif unseen(ch):
            out.append(escaped(ch))
        else:
            out.append(ch)
    return "".join(out)


_HEX = {"x": 2, "u": 4, "U": 8}


def key_value(text: str) -> str:
    """What a key's text stands for (:func:`key_text`'s inverse). A backslash that starts no
    escape is itself, so a key typed by hand reads as it looks."""
    if "\\" not in text:
        return text
    out = []
    i, end = 0, len(text)
    while i < end:
        ch = text[i]
        after = text[i + 1] if i + 1 < end else ""
        if ch != "\\" or not after:
            out.append(ch)
            i += 1
        elif after == "\\":
            out.append("\\")
            i += 2
        elif after in _READ_BACK:
            out.append(_READ_BACK[after])
            i += 2
        elif after in _HEX and _is_hex(text[i + 2 : i + 2 + _HEX[after]], _HEX[after]):
            digits = text[i + 2 : i + 2 + _HEX[after]]
            out.append(chr(int(digits, 16)))
            i += 2 + _HEX[after]
        else:
            out.append("\\")
            i += 1
    return "".join(out)


def _is_hex(digits: str, size: int) -> bool:
    if len(digits) != size or any(c not in "0123456789abcdefABCDEF" for c in digits):
        return False
    return int(digits, 16) <= 0x10FFFF


def on_screen(text: object, *, one_line: bool = False) -> str:
    """``text`` as Co prints it: every unseen character written out (newlines kept unless
    ``one_line``; a tab kept as a tab), look-alike letters in mixed-script words written
    out too, so nothing printed can move the cursor, clear or reorder the line, or pass
    for a name it is not."""
    text = str(text)
    if text.isascii():
        pattern = _ASCII_CONTROL if one_line else _ASCII_CONTROL_BUT_NEWLINE
        if pattern.search(text) is None:
            return text
    out = []
    for ch in text:
        if (ch == "\n" and not one_line) or ch == "\t" or not unseen(ch):
            out.append(ch)
        else:
            out.append(escaped(ch))
    shown = "".join(out)
    return shown if shown.isascii() else mark_lookalikes(shown)


# Letters of Cyrillic, Greek and Armenian that look like Latin ones in common fonts
# (Unicode's confusables, TR39, for the letters a file name is likely to hold).
_LOOK_LATIN = frozenset(
    "аеорсухіјѕԁԛԝһӏɑ"  # Cyrillic lower case (and Latin alpha's twin)
    "АВЕКМНОРСТХІЈЅУԌԚԜ"  # Cyrillic upper case
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοι"  # Greek
    "օոսհ"  # Armenian
)
_WORD = re.compile(r"[^\W\d_]+")
_TOKEN = re.compile(r"\S+")


def _script(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return name.split(" ", 1)[0]


def mark_lookalikes(text: str) -> str:
    """Write out the letters that make a name pass for another: in each whitespace-free
    token holding Latin letters, the letters of another script inside a Latin word
    (``rеport``), and a whole word of look-alike letters (``ехе`` in ``setup.ехе``)."""
    return _TOKEN.sub(_mark_token, text)


def _mark_token(found: re.Match[str]) -> str:
    token = found.group()
    if token.isascii():
        return token
    words = [(m.start(), m.end(), {_script(c) for c in m.group()}) for m in _WORD.finditer(token)]
    if not any("LATIN" in scripts for _, _, scripts in words):
        return token
    marked = list(token)
    for start, end, scripts in words:
        word = token[start:end]
        if "LATIN" in scripts and len(scripts) > 1:
            odd = [i for i in range(start, end) if _script(token[i]) != "LATIN"]
        elif "LATIN" not in scripts and all(c in _LOOK_LATIN for c in word):
            odd = list(range(start, end))
        else:
            continue
        for i in odd:
            marked[i] = escaped(token[i])
    return "".join(marked)
