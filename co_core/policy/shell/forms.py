"""Exact forms of commands: what a preset allows, as data, read the way each program reads.

A :class:`Form` is one row of a preset's table: the words that start it (``ls``, ``git
status``), every option it may take spelled exactly, what each option's value is, and
what each operand is. :func:`check` takes a command's words apart the way that program's
own option reader does (``getopt``: clusters, attached and separate values, ``--``; bash's
builtins; ``find``'s expression; ``git``'s options, which do not cluster) and says whether
they are one of the forms, or why not. There is no guessing: a long option given by a
prefix, an option not listed, a value of the wrong kind, one operand too many, or a file
pattern where one word is expected, and the command is not this form.

A row is written compactly (:func:`form`): options as their usage line spells them,
``"-n --lines N"`` (both names take a number), ``"--color[=WHEN]"`` (an optional value,
attached only), ``"-w COLS"``; operands as ``"PATTERN FILE..."`` or ``"[FILE]"``. The
capital words are value kinds (:data:`KINDS`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

Style = Literal[
    "getopt", "getopt+", "builtin", "git", "git+", "gitrev", "jq", "find", "test", "words"
]
# How each style reads options: short options in clusters (-la), a short option's value
# attached (-n5), a long option's value as the next word (--lines 5), ``--`` ends them,
# options after the first operand (GNU's permutation). ``getopt+`` is getopt whose option
# string starts with ``+`` (basename, tr, seq): options end at the first operand. ``git``
# is git's parse-options (status, branch, ...), ``git+`` the same ending at the first
# operand (grep, config); ``gitrev`` its revision options (log, show, diff), which never
# cluster and take a long option's value only after ``=``. jq 1.6 reads its own options:
# clusters of flags, values as the next words, no ``--``.
_STYLES = ("getopt", "getopt+", "builtin", "jq", "git", "git+", "gitrev")
CLUSTERS = dict(zip(_STYLES, (True, True, True, True, True, True, False), strict=True))
ATTACHED_SHORT = dict(zip(_STYLES, (True, True, True, False, True, True, True), strict=True))
SEPARATE_LONG = dict(zip(_STYLES, (True, True, True, True, True, True, False), strict=True))
DASHDASH = dict(zip(_STYLES, (True, True, True, False, True, True, True), strict=True))
PERMUTE = dict(zip(_STYLES, (True, False, False, True, True, False, True), strict=True))


@dataclass(frozen=True)
class Kind:
    """What a value or operand is: ``files`` kinds are names of files the program reads."""

    name: str
    what: str
    pattern: str | None = None  # the text must match it whole (None: any text)
    files: bool = False

    def accepts(self, text: str) -> bool:
        return self.pattern is None or re.fullmatch(self.pattern, text) is not None


def _kinds(*kinds: Kind) -> dict[str, Kind]:
    return {k.name: k for k in kinds}


_NUM = r"[+-]?[0-9]+"
KINDS: dict[str, Kind] = _kinds(
    Kind("FILE", "a file it reads", files=True),
    Kind("DIR", "a folder it reads", files=True),
    Kind("PATH", "a file or folder it reads", files=True),
    Kind("N", "a number", _NUM),
    Kind("COLS", "a width", r"[0-9]+"),
    Kind("SIZE", "a count or size (a number, maybe with a unit)", _NUM + r"[A-Za-z]*"),
    Kind("LIST", "a list of positions (1,3-5)", r"[0-9,-]+"),
    Kind("KEY", "a sort key (2,2n)", r"[0-9][0-9.,a-zA-Z]*"),
    Kind("RANGE", "a line range (1,20)", r"[0-9]+(,[+-]?[0-9]*)?"),
    Kind("TEXT", "text"),
    Kind("NAME", "a name"),
    Kind("PATTERN", "a search pattern"),
    Kind("GLOB", "a file-name pattern"),
    Kind("FORMAT", "an output format"),
    Kind("SEP", "a separator"),
    Kind("DATE", "a date"),
    Kind("REV", "a revision or a path (git)"),
    Kind("JSON", "a JSON text"),
    Kind("FILTER", "a jq filter (jq's language reads and prints; it has no way to write or run)"),
    Kind(
        "SEDPRINT",
        "lines to print: N, N,M, $ and p, joined by ;",
        r"(?:(?:[0-9]+|\$)(?:,(?:[0-9]+|\$))?)?p(?:;(?:(?:[0-9]+|\$)(?:,(?:[0-9]+|\$))?)?p)*",
    ),  # fmt: skip
    Kind("+FORMAT", "an output format starting with +", r"\+.*"),
    Kind("WHEN", "always, never or auto", r"always|never|auto|yes|no|force|none|tty|if-tty"),
    Kind("RADIX", "d, o, x or n", r"[doxn]"),
    Kind("TYPE", "a type name", r"[A-Za-z0-9_.,+-]+"),
    Kind("WORD", "one of the program's words for it", r"[A-Za-z0-9_.,:+-]+"),
)


@dataclass(frozen=True)
class Option:
    names: tuple[str, ...]
    values: tuple[Kind, ...] = ()  # what its value is (two for jq's --arg NAME VALUE)
    optional: bool = False  # the value is optional, and then only attached (--color=auto)
    spelled: str = ""  # as the table writes it

    @property
    def takes_value(self) -> bool:
        return bool(self.values)


@dataclass(frozen=True)
class Slot:
    kind: Kind
    optional: bool = False
    repeat: bool = False


@dataclass(frozen=True)
class Form:
    """One row of a preset's table."""

    name: str  # how ``co policy explain`` and the docs name the row
    command: tuple[str, ...]  # the words that start it
    options: tuple[Option, ...] = ()
    operands: tuple[Slot, ...] = ()
    style: Style = "getopt"
    instead: frozenset[str] = frozenset()  # options giving the first operand (grep -e)
    needs: frozenset[str] = frozenset()  # the row applies only with one of these options
    numeric: Literal["first", "any"] | None = None  # -5 means a count (head -5, git log -5)
    # a first word starting with + is GNU's old count form (tail +5), whose letters after
    # the number mean more (tail +5f follows the file and never ends): only +NUM is listed
    plus: bool = False
    what: str = ""  # what it does, for the docs
    operators: frozenset[str] = frozenset()  # find's primaries that take no value, test's
    spelled_operands: str = ""
    by_name: dict[str, Option] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.by_name.update({n: o for o in self.options for n in o.names})

    @property
    def program(self) -> str:
        return self.command[0]


def form(
    command: str,
    options: Iterable[str] = (),
    operands: str = "",
    *,
    style: Style = "getopt",
    instead: str = "",
    needs: str = "",
    numeric: Literal["first", "any"] | None = None,
    plus: bool = False,
    what: str = "",
    name: str | None = None,
    operators: str = "",
) -> Form:
    """One row, written as its usage line: see the module's docstring."""
    return Form(
        name or command,
        tuple(command.split()),
        tuple(_option(text) for text in options),
        tuple(_slot(word) for word in operands.split()),
        style,
        frozenset(instead.split()),
        frozenset(needs.split()),
        numeric,
        plus,
        what,
        frozenset(operators.split()),
        operands,
    )


def _option(text: str) -> Option:
    names, values, optional = [], [], False
    for token in text.split():
        if token.startswith("-"):
            name, bracket, kind = token.partition("[")
            if bracket:  # --color[=WHEN], -w[COLS]
                optional = True
                values = [KINDS[kind.strip("=]")]]
            elif "=" in token:  # --format=FORMAT (git: the value only attached)
                name, _, kind = token.partition("=")
                values = [KINDS[kind]]
            names.append(name)
        else:
            values.append(KINDS[token])
    return Option(tuple(names), tuple(values), optional, text)


def _slot(word: str) -> Slot:
    optional = word.startswith("[")
    word = word.strip("[]")
    repeat = word.endswith("...")
    return Slot(KINDS[word.removesuffix("...")], optional, repeat)


# -- reading a command against a row ------------------------------------------------------


class Miss(Exception):
    """The command is not this form; the message says why, for the user."""


@dataclass
class Reading:
    """What the words were, read as the row's program reads them."""

    options: list[tuple[int, str]] = field(default_factory=list)  # (word index, name)
    operands: list[int] = field(default_factory=list)


def check(row: Form, words: Sequence[str], patterns: frozenset[int] = frozenset()) -> Reading:
    """Read ``words`` as ``row``'s program does; Miss (with the reason) unless they are one
    of its forms. ``patterns``: indices of words that are file patterns (``src/*.py``),
    which become any number of words when the command runs."""
    start = len(row.command)
    if tuple(words[:start]) != row.command:
        raise Miss(f"it is not {' '.join(row.command)}")
    if row.style == "find":
        return _find(row, words, patterns)
    if row.style in ("test", "words"):
        return _words(row, words)
    reading = Reading()
    i, done = start, False
    while i < len(words):
        word = words[i]
        if row.plus and i == start and word.startswith("+"):
            if not re.fullmatch(r"\+[0-9]+", word):
                raise Miss(
                    f"{word}: {row.program} reads a first word starting with + as a count and "
                    "what follows it (+5f follows the file and never ends); only +NUM is listed"
                )
            reading.options.append((i, "+NUM"))
        elif done or not word.startswith("-") or word == "-":
            reading.operands.append(i)
            done = done or not PERMUTE[row.style]
        elif word == "--" and DASHDASH[row.style]:
            done = True
        elif row.numeric and re.fullmatch(r"-[0-9]+", word):
            if row.numeric == "first" and i != start:
                raise Miss(f"{word} (a count) must come first")
            reading.options.append((i, "-NUM"))
        elif word in row.by_name and not row.by_name[word].takes_value:
            reading.options.append((i, word))  # a flag (also a listed -vv)
        elif word.startswith("--"):
            i = _long(row, words, i, reading, patterns)
        else:
            i = _short(row, words, i, reading, patterns)
        i += 1
    given = {name for _, name in reading.options}
    if row.needs and not row.needs & given:
        raise Miss(f"this form needs {' or '.join(sorted(row.needs))}")
    slots = row.operands[1:] if row.instead & given else row.operands
    _fill(row, slots, words, reading.operands, patterns)
    return reading


def _unknown(row: Form, option: str) -> Miss:
    name = " ".join(row.command)
    if option.startswith("--") and any(n.startswith(option) for n in row.by_name):
        return Miss(
            f"{option} is not an option the read-only preset lists for {name} "
            "(options are taken only spelled out in full)"
        )
    return Miss(f"{option} is not an option the read-only preset lists for {name}")


def _value(row: Form, option: Option, name: str, text: str, at: int, patterns: frozenset[int]) -> None:  # fmt: skip
    kind = option.values[0]
    if at in patterns:
        raise Miss(f"the value of {name} is a file pattern, which can become several words")
    if not kind.accepts(text):
        raise Miss(f"{name} {text!r}: its value must be {kind.what}")


def _long(row: Form, words: Sequence[str], i: int, reading: Reading, patterns: frozenset[int]) -> int:  # fmt: skip
    name, eq, value = words[i].partition("=")
    option = row.by_name.get(name)
    if option is None:
        raise _unknown(row, name)
    reading.options.append((i, name))
    if not option.takes_value:
        if eq:
            raise Miss(f"{name} takes no value")
        return i
    if eq:
        if len(option.values) > 1 or (row.style == "jq"):
            raise Miss(f"{name} takes its value as the next word")
        _value(row, option, name, value, -1, patterns)
        return i
    if option.optional:
        return i  # --color alone; "--color always" would make "always" an operand
    if not SEPARATE_LONG[row.style]:
        raise Miss(f"write {name}=VALUE (as one word)")
    for k, kind in enumerate(option.values, 1):
        if i + k >= len(words):
            raise Miss(f"{name} needs {kind.what}")
        _value(row, Option(option.names, (kind,)), name, words[i + k], i + k, patterns)
    return i + len(option.values)


def _short(row: Form, words: Sequence[str], i: int, reading: Reading, patterns: frozenset[int]) -> int:  # fmt: skip
    word = words[i]
    for k, letter in enumerate(word[1:], 1):
        name = "-" + letter
        option = row.by_name.get(name)
        if option is None:
            raise _unknown(row, name if len(word) > 2 else word)
        if k > 1 and not CLUSTERS[row.style]:
            raise Miss(f"{word}: {' '.join(row.command)} does not read options joined in one word")
        reading.options.append((i, name))
        if not option.takes_value:
            continue
        rest = word[k + 1 :]
        if option.optional:
            if rest:
                _value(row, option, name, rest, -1, patterns)
            return i
        if rest:
            if not ATTACHED_SHORT[row.style]:
                raise Miss(f"{name} takes its value as the next word")
            _value(row, option, name, rest, -1, patterns)
            return i
        for n, kind in enumerate(option.values, 1):
            if i + n >= len(words):
                raise Miss(f"{name} needs {kind.what}")
            _value(row, Option(option.names, (kind,)), name, words[i + n], i + n, patterns)
        return i + len(option.values)
    return i


def _fill(
    row: Form,
    slots: Sequence[Slot],
    words: Sequence[str],
    operands: list[int],
    patterns: frozenset[int],
) -> None:
    """Each operand in its slot, in order (``X...`` takes one or more, ``[X...]`` any
    number); every slot that is not optional filled."""
    counts = [0] * len(slots)
    s = 0
    for i in operands:
        while s < len(slots) and not slots[s].repeat and counts[s]:
            s += 1
        if s >= len(slots):
            what = "no operands" if not slots else f"at most {len(slots)} operand(s)"
            raise Miss(f"{words[i]}: {' '.join(row.command)} takes {what} in this preset")
        slot = slots[s]
        if i in patterns and not (slot.repeat and slot.kind.files):
            raise Miss(
                f"{words[i]} is a file pattern where one {slot.kind.name} goes: it could "
                "become several words"
            )
        if not slot.kind.accepts(words[i]):
            raise Miss(f"{words[i]!r} is not {slot.kind.what}")
        counts[s] += 1
    for slot, count in zip(slots, counts, strict=True):
        if not count and not slot.optional:
            raise Miss(f"{' '.join(row.command)} needs {slot.kind.what}")


def _find(row: Form, words: Sequence[str], patterns: frozenset[int]) -> Reading:
    """``find [-H|-L|-P] [PATH...] EXPRESSION``: each word of the expression a listed
    primary (with exactly its values) or operator."""
    reading, i = Reading(), 1
    while i < len(words) and words[i] in ("-H", "-L", "-P"):
        reading.options.append((i, words[i]))
        i += 1
    while i < len(words) and not (words[i].startswith("-") or words[i] in ("(", ")", "!", ",")):
        reading.operands.append(i)
        i += 1
    while i < len(words):
        word = words[i]
        if word in row.operators:
            reading.options.append((i, word))
        elif word in row.by_name:
            option = row.by_name[word]
            reading.options.append((i, word))
            for n, kind in enumerate(option.values, 1):
                if i + n >= len(words):
                    raise Miss(f"{word} needs {kind.what}")
                _value(row, Option(option.names, (kind,)), word, words[i + n], i + n, patterns)
            i += len(option.values)
        elif word.startswith("-"):
            raise _unknown(row, word)
        else:
            raise Miss(f"{word}: find reads its folders before its expression")
        i += 1
    return reading


def _words(row: Form, words: Sequence[str]) -> Reading:
    """``echo``-like commands read no options (every word is text); ``test``/``[`` reads
    its operators, and only the listed ones may appear."""
    reading = Reading(operands=list(range(len(row.command), len(words))))
    if row.style == "words":
        return reading
    body = list(words[1:])
    if row.program == "[":
        if not body or body[-1] != "]":
            raise Miss("[ must end with ]")
        body = body[:-1]
    for word in body:
        if word.startswith("-") and len(word) > 1 and word not in row.operators:
            raise Miss(f"{word} is not a test the read-only preset lists")
    return reading
