"""A small, deterministic BM25 ranking of short texts (tool descriptions) against a query.

Words are lowercased (a French, German or Spanish word the lexicon knows becomes its
English word), split at anything that is not a letter or digit (``list_files`` is
"list" and "file"), common English words are left out and a plural "s" is dropped, so
"Read my notes" finds ``read_note``. Equal scores keep the documents' order.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from co_core.agent.tools.lexicon import in_english

K1 = 1.2
B = 0.75

STOP = frozenset(
    """a an and are as at be by can could do does for from has have how i if in into is it
    its me my of on or our please say should so some tell than that the their them then
    there these this to us was we what when where which who why will with would you your
    all any one only also just not no yes""".split()
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def words(text: str) -> list[str]:
    """The words of ``text`` as BM25 counts them (in English, where the lexicon knows)."""
    out = []
    for raw in _WORD.findall(_CAMEL.sub(" ", text)):
        word = in_english(raw.lower())
        if word in STOP or len(word) < 2:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


def unaccented(word: str) -> str:
    """``word`` without its accents: the French "température" is the "temperature" of an
    English note (a result and a question compared across languages)."""
    if word.isascii():
        return word
    split = unicodedata.normalize("NFKD", word)
    return "".join(c for c in split if not unicodedata.combining(c))


@dataclass
class BM25:
    """An index of named documents; ``scores`` ranks them against weighted query words."""

    docs: Mapping[str, Sequence[str]]  # name -> its words
    _freqs: dict[str, Counter[str]] = field(default_factory=dict, repr=False)
    _df: Counter[str] = field(default_factory=Counter, repr=False)
    _avg: float = 1.0

    def __post_init__(self) -> None:
        self._freqs = {name: Counter(ws) for name, ws in self.docs.items()}
        for counts in self._freqs.values():
            self._df.update(counts.keys())
        lengths = [len(ws) for ws in self.docs.values()]
        self._avg = (sum(lengths) / len(lengths)) if lengths else 1.0

    def idf(self, word: str) -> float:
        n, df = len(self._freqs), self._df.get(word, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def scores(self, query: Mapping[str, float]) -> dict[str, float]:
        """Every document's score for ``query`` (word -> weight); 0 when nothing matches."""
        out: dict[str, float] = {}
        for name, counts in self._freqs.items():
            length = sum(counts.values()) or 1
            score = 0.0
            for word, weight in query.items():
                tf = counts.get(word, 0)
                if tf:
                    norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / self._avg))
                    score += weight * self.idf(word) * norm
            out[name] = score
        return out

    def ranked(self, query: Mapping[str, float]) -> list[tuple[str, float]]:
        """Documents with a score above 0, best first (ties keep the index's order)."""
        order = {name: i for i, name in enumerate(self.docs)}
        found = [(name, s) for name, s in self.scores(query).items() if s > 0]
        return sorted(found, key=lambda item: (-item[1], order[item[0]]))


FILE_NAME = re.compile(r"(?<![\w@])[\w./-]*\w\.[A-Za-z][A-Za-z0-9]{0,4}\b(?!\.\w)")
_CODE = re.compile(r"`[^`\n]+`")
_QUESTION = re.compile(
    r"\?|^\s*(what|which|who|when|where|how|quel|quelle|qui|quand|où|comment|combien|was"
    r"|welche|welcher|welches|wer|wann|wo|wie|qué|cuál|quién|cuándo|dónde|cómo)\b",
    re.I | re.M,
)
QUESTION_WEIGHT = 0.5
NAME_WEIGHT = 0.3  # the words inside a file name ("notes" of notes.txt) count less


def query_weights(*texts: tuple[str, float]) -> dict[str, float]:
    """Query words from (text, weight) pairs; a word keeps its highest weight.

    Words of other languages count as the English words they stand for
    (:func:`co_core.agent.tools.lexicon.in_english`). A file name (``notes.txt``,
    ``src/app.py``) counts as the word "file", and the words inside it count less: "Read notes.txt" is about a
    file, not about notes. Text in backticks counts as the word "command", and a question
    a little as "read" when it names a file, else as "search".
    """
    weights: dict[str, float] = {}

    def add(word: str, weight: float) -> None:
        weights[word] = max(weights.get(word, 0.0), weight)

    for text, weight in texts:
        if _CODE.search(text):
            add("command", weight)
            text = _CODE.sub(" ", text)  # a command's words and files are the command's
        names = FILE_NAME.findall(text)
        if _QUESTION.search(text):  # a question reads what it names, else searches
            add("read" if names else "search", weight * QUESTION_WEIGHT)
        for name in names:
            add("file", weight)
            for word in words(name):
                add(word, weight * NAME_WEIGHT)
        for word in words(FILE_NAME.sub(" ", text)):
            add(word, weight)
    return weights
