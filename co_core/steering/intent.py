"""What the user's words ask for: the effects they request by an explicit verb, and the words
that say which tool.

Co may choose a tool for a small model (co_core.steering), but never one that
changes, sends or runs something unless the user asked for that effect in so many words,
about what that tool handles: "Add '- milk' to my Todo note" asks for a write to a note;
"What is in sales.csv?" asks for none; "Don't delete anything, just list the files" asks
for none either; "I want to write to Alice; her address is in people.csv" asks for a
write, but not of a file (the verb's clause says nothing of one). Text in quotes or
backticks, file names and links are what the user wants handled, not instructions: a verb
there asks for nothing ("Search my notes for 'delete'").

The tables are data (:mod:`co_core.steering.lexicon`, and other languages' words in
English in :mod:`co_core.agent.tools.lexicon`): English, French, German and Spanish.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from co_core.agent.tools.bm25 import FILE_NAME, STOP, query_weights, words
from co_core.agent.tools.lexicon import in_english
from co_core.steering.lexicon import (
    ACTION_VERBS,
    CLAUSE_BREAKS,
    COMMAND_WORD,
    EFFECT_VERBS,
    FILE_WORD,
    IRREGULAR_ING,
    LIVE_FACTS,
    NEGATIONS,
    NOT_A_REQUEST,
    REQUEST_WORDS,
    SMALL_WORDS,
    SYNONYM_WEIGHT,
    SYNONYMS,
    USE,
    Effect,
)

# What the user wants handled rather than done: quoted or backticked text, links, file names.
QUOTED = re.compile(
    r"`[^`\n]+`"  # `code`
    r"|(?<!\w)'[^'\n]+'(?!\w)"  # 'text' (not the apostrophe of "don't", "l'adresse")
    r'|"[^"\n]+"|“[^”\n]+”|„[^“”\n]+[“”]|«[^»\n]+»|‘[^’\n]+’'
    r"|\b[a-z][a-z0-9+.-]*://\S+",  # a link
    re.I,
)
CODE = re.compile(r"`[^`\n]+`")
SMALL = STOP | SMALL_WORDS  # words that say nothing of what to do ("the", "les", "meine")
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_CLAUSE = re.compile(r"[.;!?]+(?:\s|$)|\n")
_QUESTION = re.compile(r"\?")


def _ing(verb: str) -> str:
    if verb in IRREGULAR_ING:
        return IRREGULAR_ING[verb]
    if verb.endswith("e") and not verb.endswith("ee"):
        return verb[:-1] + "ing"
    return verb + "ing"


VERB_OF: dict[str, Effect] = {}  # "delete" and "deleting" -> "write"
for _effect, _listed in EFFECT_VERBS.items():
    for _verb in _listed:
        VERB_OF[_verb] = _effect
        VERB_OF[_ing(_verb)] = _effect


def instructions(text: str) -> str:
    """``text`` without what it asks to have handled (quotes, code, links, file names)."""
    return FILE_NAME.sub(" ", QUOTED.sub(" ", text))


def spoken(text: str) -> str:
    """``text`` without quoted text and links (code in backticks and file names stay: the
    query reads them as "command" and "file")."""
    return QUOTED.sub(lambda m: m.group(0) if CODE.fullmatch(m.group(0)) else " ", text)


@dataclass(frozen=True)
class Intent:
    """The user's words, read once: the ranking query, the effects asked (each with the
    words of the clauses that ask for it), the words that say what to do (in English,
    without stop words), and whether the words ask for anything at all."""

    text: str
    query: dict[str, float]
    asked: dict[str, frozenset[str]] = field(default_factory=dict)  # effect -> clause words
    words: tuple[str, ...] = ()
    request: bool = False  # a question, a request word, a verb of an effect, a file named
    actions: tuple[str, ...] = ()  # what the words ask Co to do in the world ("Turn on ...")
    facts: tuple[str, ...] = ()  # facts only a live source knows ("weather"), in English
    question: bool = False  # asked as a question
    heads: frozenset[str] = frozenset()  # each clause's first word, in English ("stash")

    @property
    def effects(self) -> frozenset[str]:
        return frozenset(self.asked)

    def asks(self, effect: str | None, about: Iterable[str] = (), verb: str = "") -> bool:
        """Do the words ask for ``effect`` (a tool's risk), in a clause that names one of
        ``about`` (the tool's own words) when given? Reading always may; a tool of unknown
        effect needs a verb of some effect. The tool's own verb (``verb``: "stash" of
        ``stash_blurb``), said first in a clause ("Stash 'x' on the top shelf"), asks for
        what the tool declares it does."""
        if effect == "read":
            return True
        if verb and verb not in VERB_OF and verb in self.heads:
            return True  # a verb the tables do not know, said as the tool says it
        # "file" or "note", not the verb itself; running needs no object ("run sha256sum")
        targets = set() if effect == "exec" else set(about) - set(VERB_OF)
        clauses = list(self.asked.values()) if effect is None else [self.asked.get(effect)]
        return any(
            clause is not None and (not targets or bool(clause & targets)) for clause in clauses
        )


def _clauses(text: str) -> list[str]:
    # split where the words end a sentence, never inside quotes ("'- call Dr. Smith'")
    masked = QUOTED.sub(lambda m: "_" * len(m.group(0)), text)
    sentences, start = [], 0
    for brk in _CLAUSE.finditer(masked):
        sentences.append(text[start : brk.start()])
        start = brk.end()
    sentences.append(text[start:])
    parts: list[str] = []
    for sentence in sentences:
        chunk: list[str] = []
        for token in sentence.split():
            if token.lower().strip(",") in CLAUSE_BREAKS:
                parts.append(" ".join(chunk))
                chunk = []
            else:
                chunk.append(token)
        parts.append(" ".join(chunk))
    return [p for p in parts if p.strip()]


def _clause_words(clause: str) -> frozenset[str]:
    """What a clause is about: its words, "file" for a file it names, "command" for code."""
    found = set(words(instructions(clause)))
    if FILE_NAME.search(QUOTED.sub(" ", clause)):
        found.add(FILE_WORD)
    if CODE.search(clause):
        found.add(COMMAND_WORD)
    for word in list(found):
        found.update(SYNONYMS.get(word, ()))
    return frozenset(found)


def _verbs(clause: str) -> set[Effect]:
    """The effects the not negated verbs of one clause ask for."""
    tokens = [t.lower() for t in _TOKEN.findall(instructions(clause))]
    found: set[Effect] = set()
    for i, token in enumerate(tokens):
        effect = VERB_OF.get(token) or VERB_OF.get(in_english(token))
        if effect is None:
            continue
        before = tokens[max(0, i - 2) : i]
        if before and before[-1] in NOT_A_REQUEST:
            continue  # "the draft", "is set", "does config.ini set"
        after = tokens[i + 1 : i + 2]
        if any(w in NEGATIONS or w == "t" for w in before) or (
            after and after[0] in ("nicht", "nie", "pas", "jamais")
        ):
            continue  # "don't delete", "ne supprime pas", "lösche nicht"
        found.add(effect)
    if CODE.search(clause) and (found or any(in_english(t) in USE or t in USE for t in tokens)):
        found.add("exec")  # "Delete old.log with `rm old.log`", "use `wc -l`"
    return found


def asked_effects(text: str) -> dict[str, frozenset[str]]:
    """Each effect an explicit, not negated verb of ``text`` asks for, with the words of the
    clauses it is asked in. A command in backticks that the words ask to act with
    ("Delete old.log with `rm old.log`", "use `wc -l`") asks for running it."""
    asked: dict[str, set[str]] = {}
    for clause in _clauses(text):
        for effect in _verbs(clause):
            asked.setdefault(effect, set()).update(_clause_words(clause))
    return {effect: frozenset(about) for effect, about in asked.items()}


def _acts(text: str) -> tuple[str, ...]:
    """The clauses that ask Co to act in the world: a verb of :data:`ACTION_VERBS` said as
    a request (first in its clause, or after words that only ask: "please", "can you"),
    from that verb on (at most six words). "Whose turn is it" asks for nothing."""
    found = []
    for clause in (c for whole in _clauses(instructions(text)) for c in whole.split(",")):
        tokens = clause.split()
        plain = [t.lower().strip(".,!?-") for t in tokens]
        for i, token in enumerate(plain):
            if in_english(token) not in ACTION_VERBS and token not in ACTION_VERBS:
                continue
            if all(
                w in REQUEST_WORDS or w in SMALL or in_english(w) in REQUEST_WORDS
                for w in plain[:i]
            ):
                found.append(" ".join(tokens[i : i + 6]).strip(".,!?"))
            break
    return tuple(found)


def _head(clause: str) -> str:
    """A clause's first word, after the words that only ask ("please", "can you"), in
    English: the verb of a request said as one."""
    for token in _TOKEN.findall(clause):
        word = in_english(token.lower())
        if word not in REQUEST_WORDS and word not in SMALL:
            return word
        if word not in REQUEST_WORDS and word not in ("you", "u"):
            return ""
    return ""


def _is_request(text: str, said: Iterable[str], asked: dict[str, frozenset[str]]) -> bool:
    if asked or _QUESTION.search(text) or FILE_NAME.search(spoken(text)):
        return True
    tokens = [t.lower() for t in _TOKEN.findall(instructions(text))]
    return any(t in REQUEST_WORDS or in_english(t) in REQUEST_WORDS for t in tokens) or any(
        w in REQUEST_WORDS for w in said
    )


def read_intent(text: str) -> Intent:
    said = tuple(w for w in dict.fromkeys(words(instructions(text))) if w not in SMALL)
    asked = asked_effects(text)
    query = query_weights((spoken(text), 1.0))
    for word in said:
        effect = VERB_OF.get(word)
        if effect is not None and effect not in asked:
            continue  # "does config.ini set": not a request to edit
        for other in SYNONYMS.get(word, ()):
            query[other] = max(query.get(other, 0.0), SYNONYM_WEIGHT)
    if "exec" in asked:
        query["run"] = max(query.get("run", 0.0), 1.0)  # something is to be run
    if not asked and FILE_NAME.search(spoken(text)):
        query["read"] = max(query.get("read", 0.0), 1.0)  # a file named, nothing asked: read it
    facts = tuple(w for w in said if w in LIVE_FACTS)
    request = _is_request(text, said, asked)
    question = bool(_QUESTION.search(text))
    heads = frozenset(_head(c) for c in _clauses(instructions(text))) - {""}
    return Intent(text, query, asked, said, request, _acts(text), facts, question, heads)
