"""Which runs of the user's words a forced call may copy (co_core.steering.values).

When Co makes a small model call a tool, every argument is copied from the user's words.
A tiny model still picks the wrong run: the text to write as the note's name, the verb as
the text. The words themselves say which run is which, in any language Co reads:

- **Literal parts** are text to be used as it is: inside quotes or backticks, or after a
  colon that introduces it ("with the text: milk, eggs"). A tool's ``text`` and
  ``content`` (its declared roles) are one whole literal part when the words have any;
  the tool's other strings (a note's name) are never a piece of one, and only a whole one
  when there are several ("... to my note 'Inbox'").
- **The tool's own words** say which tool, not what it works on: outside literal parts,
  a name is never copied across the words of the tool's name, description and
  parameters (or a word standing for one of them: "task" for "todo"), a verb that asks
  for an effect ("create", "add"), a word that only asks ("please", "need"), or a word
  that introduces a name ("named") or names a text ("the text", "la ligne"), all read in
  English ("Notiz", "crée", "nommée", "dem Inhalt" count too).
- A copied run starts and ends at word edges, never runs across a clause's end ("? ",
  " : "), never on a small word ("the wifi", not "wifi for the"; "la", "meine", "avec"
  too), never with the sentence's punctuation.

Positions a run may not cover are masked (:meth:`Source.masked`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from co_core.agent.tools.bm25 import FILE_NAME, words
from co_core.steering.intent import QUOTED, SMALL, VERB_OF
from co_core.steering.lexicon import NAMING, REQUEST_WORDS, SYNONYMS

STARTS_AFTER = " \t\n'\"`(:“„«‘"
ENDS_BEFORE = " \t\n'\"`),:;?!”“»’-"  # "Todo" of "Todo-Notiz"
TRAILING = ".,:;?!-"  # a copy does not end with the sentence's punctuation, nor a hyphen
MASK = "\x00"  # a position no run may cover
_INTRO_COLON = re.compile(r"\s?:\s+(?=\S)")  # "text: milk", "texte : lait"; not 9:30, not https:
_CLAUSE_END = re.compile(r"\s?[:;?!](?=\s|$)")  # a value never runs across "? ", " : "
_TOKEN = re.compile(r"[^\W_]+")


def copyable(text: str) -> str:
    """The user's words as runs are copied from: without the sentence's last punctuation."""
    return text.strip().rstrip(TRAILING).rstrip()


def _small(word: str) -> bool:
    return word.lower() in SMALL


@dataclass(frozen=True)
class Part:
    """A literal part: ``text[start:end]`` is the text itself (without its quotes), which
    ``outer`` spans with them."""

    start: int
    end: int
    outer: tuple[int, int]


def literal_parts(text: str, *, question: bool = False) -> list[Part]:
    """The text to use as it is: quoted runs, and the rest of the words after the first
    colon that introduces text (when that rest is not itself one quoted run, nor the
    ``question`` the words end with: "Run `ls`: what is there?")."""
    parts = []
    for quote in QUOTED.finditer(text):
        body = quote.group(0)
        if "://" in body and body[0] not in "`'\"“„«‘":
            continue  # a link, not a quotation
        quoted = body[1:-1]
        start = quote.start() + 1 + len(quoted) - len(quoted.lstrip())  # « text », „text“
        end = quote.end() - 1 - (len(quoted) - len(quoted.rstrip()))
        parts.append(Part(start, end, (quote.start(), quote.end())))
    masked = QUOTED.sub(lambda m: "_" * len(m.group(0)), text)
    colon = _INTRO_COLON.search(masked)
    if colon is not None and not question:
        start, end = colon.end(), len(text)
        inner = [p for p in parts if p.outer[0] >= start]
        if not (len(inner) == 1 and inner[0].outer == (start, end)):
            parts.append(Part(start, end, (colon.start(), end)))
    return sorted(parts, key=lambda p: p.start)


@dataclass(frozen=True)
class Source:
    """The user's words, prepared once for one forced call."""

    text: str
    parts: tuple[Part, ...]

    @classmethod
    def of(cls, words_: str) -> Source:
        text = copyable(words_)
        return cls(text, tuple(literal_parts(text, question=words_.rstrip().endswith("?"))))

    def literals(self) -> list[str]:
        """The literal parts' texts, each a whole value for a payload."""
        return list(dict.fromkeys(self.text[p.start : p.end] for p in self.parts))

    def masked(self, tool_words: Iterable[str] = (), avoid: Iterable[str] = ()) -> str:
        """The text with what a non-payload value may not cover masked: the literal parts
        (quotes included), the values to ``avoid`` (they just failed) and, outside them,
        the words that say which tool."""
        chars = list(self.text)
        for mark in _CLAUSE_END.finditer(self.text):
            chars[mark.start() : mark.end()] = MASK * (mark.end() - mark.start())
        for value in avoid:
            for found in re.finditer(re.escape(value), self.text):
                chars[found.start() : found.end()] = MASK * (found.end() - found.start())
        for part in self.parts:
            chars[part.outer[0] : part.outer[1]] = MASK * (part.outer[1] - part.outer[0])
        blocked = set(tool_words) | set(VERB_OF) | NAMING | REQUEST_WORDS
        for token in _TOKEN.finditer(self.text):
            if chars[token.start()] == MASK:
                continue
            said = words(token.group(0))
            if any(w in blocked or set(SYNONYMS.get(w, ())) & blocked for w in said):
                chars[token.start() : token.end()] = MASK * (token.end() - token.start())
        for name in FILE_NAME.finditer(self.text):  # never a piece of a file's name (".ini")
            if MASK in chars[name.start() : name.end()]:
                chars[name.start() : name.end()] = MASK * (name.end() - name.start())
        return "".join(chars)


def edges(text: str) -> tuple[list[int], set[int]]:
    """Where a copied run of ``text`` may start and end: at word edges, not on a small
    word, not with the sentence's punctuation, never across a masked position."""
    n = len(text)

    def end(j: int) -> bool:
        last = text[j - 1]
        if last.isspace() or last in TRAILING or last == MASK:
            return False
        word = re.search(r"\w+$", text[:j])
        if word is not None and _small(word.group(0)):
            return False  # "the wifi" but not "wifi for the"
        if j == n:
            return True
        nxt = text[j]
        return (
            nxt in ENDS_BEFORE
            or nxt == MASK
            or (nxt == "." and (j + 1 == n or text[j + 1] in " \t\n" + MASK))
        )

    edges_ = [
        i
        for i in range(n)
        if not text[i].isspace()
        and text[i] != MASK
        and (i == 0 or text[i - 1] in STARTS_AFTER or text[i - 1] == MASK)
    ]
    starts = [i for i in edges_ if not _small((re.match(r"\w+", text[i:]) or [""])[0])]
    return starts or edges_, {j for j in range(1, n + 1) if end(j)}


MAX_SPANS = 500  # copied runs listed in a JSON schema; beyond, any string


def copy_spans(text: str, *, masked: str | None = None) -> list[str] | None:
    """The runs :func:`copy_rules` allows, listed (for a JSON schema's ``enum``); None when
    there are more than ``MAX_SPANS``."""
    if masked is None:
        text = copyable(text)
        masked = text
    if not text:
        return None
    starts, ends = edges(masked)
    stops = sorted(ends)
    if len(starts) * len(stops) > 4 * MAX_SPANS:
        return None
    spans = [text[i:j] for i in starts for j in stops if j > i and MASK not in masked[i:j]]
    return spans if len(spans) <= MAX_SPANS else None


def short_runs(text: str, max_words: int = 6) -> list[str]:
    """Every run of the user's words that :func:`edges` allows, of at most ``max_words``
    words: the names they may give ("Recipes/Pancakes", "Inbox", "the Travel folder")."""
    text = copyable(text)
    starts, ends = edges(text)
    found: list[str] = []
    for i in starts:
        spaces = 0
        for j in range(i + 1, len(text) + 1):
            if text[j - 1].isspace():
                spaces += 1
                if spaces >= max_words:
                    break
            if j in ends:
                found.append(text[i:j])
    return list(dict.fromkeys(found))


# A token of an expression written in words: it holds a digit, an operator or a bracket
# ("7919", "*", "2**10", "math.sqrt(2)", "(1+2)"); words ("with", "Python") end it.
_EXPRESSION_TOKEN = re.compile(r"[\w.]*[\d+\-*/%^()\[\]<>=][\w.+\-*/%^()\[\]<>=,]*")
_OPERATOR = re.compile(r"[+\-*/%^()\[\]<>=]")
_NUMBER_LIKE = re.compile(r"\d+(?:[-./]\d+)+")  # 2024-05-01, 1.2.3, 12/05
_NAMED_NUMBER = re.compile(r"[A-Za-z]+-\d+")  # SHA-256, UTF-8


def expressions(text: str) -> list[str]:
    """The expressions the words write outside quotes: the longest runs of tokens that
    hold a digit, an operator or a bracket, with a digit and an operator or a bracket in
    them ("7919 * 104729", not a lone "7919"; not a date, "2024-05-01", a version,
    "1.2.3", a name with a number, "SHA-256", nor a flag, "-l")."""
    found: list[str] = []
    run: list[str] = []

    def close() -> None:
        expression = " ".join(run)
        if (
            _OPERATOR.search(expression)
            and any(c.isdigit() for c in expression)
            and not _NUMBER_LIKE.fullmatch(expression)
            and not _NAMED_NUMBER.fullmatch(expression)
        ):
            found.append(expression)
        run.clear()

    for token in text.split():
        bare = token.rstrip(TRAILING) or token
        if not _EXPRESSION_TOKEN.fullmatch(bare):
            close()
            continue
        run.append(bare)
        if bare != token:  # the sentence's punctuation ends it
            close()
    close()
    return list(dict.fromkeys(found))


_PROGRAM = re.compile(r"[A-Za-z][\w.+-]*")  # a program's name, as a command starts
_FLAG = re.compile(r"--?[A-Za-z0-9][\w=.-]*")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")


def numbers_in(text: str) -> list[str]:
    """The numbers written in ``text``, as JSON writes them ("8088", "2.5"; the "05" of
    "2024-05-01" is 5: JSON has no leading zeros)."""
    found = (m.group(0).rstrip(".") for m in _NUMBER.finditer(text))
    return list(dict.fromkeys(json.dumps(float(n) if "." in n else int(n)) for n in found))


_LINK = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"`<>]+", re.I)


def file_names(source: Source) -> list[str]:
    """The names of things the words give as such: links, and file names outside literal
    parts or as a whole literal part ('report.txt'), never one inside a text ("Post 'see
    report.txt'") nor a piece of a link."""
    links = [(m.start(), m.end(), m.group(0).rstrip(TRAILING)) for m in _LINK.finditer(source.text)]
    outside = [
        n.group(0)
        for n in FILE_NAME.finditer(source.text)
        if not any(p.outer[0] <= n.start() < p.outer[1] for p in source.parts)
        and not any(a <= n.start() < b for a, b, _ in links)
    ]
    whole = [t for t in source.literals() if FILE_NAME.fullmatch(t)]
    return list(dict.fromkeys([link for _, _, link in links] + outside + whole))


def commands(masked: str) -> list[str]:
    """The commands the words write without quotes: each word that may be a program (not
    masked, not a small word, not a file), alone and with each run of flags after it
    ("Run sha256sum on blob.txt", "mit sha256sum den Hash": not "sha256sum den Hash")."""
    tokens = [t.rstrip(TRAILING) for t in masked.split()]
    found: list[str] = []
    for i, program in enumerate(tokens):
        if not _PROGRAM.fullmatch(program) or program.lower() in SMALL:
            continue
        if FILE_NAME.fullmatch(program) and not program.endswith((".sh", ".py")):
            continue  # a file, not a program
        found.append(program)
        for flag in tokens[i + 1 :]:
            if not _FLAG.fullmatch(flag):
                break
            found.append(f"{found[-1]} {flag}")
    return list(dict.fromkeys(found))
