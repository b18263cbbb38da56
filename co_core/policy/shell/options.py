"""Reading a program's options the way getopt does: ``-abc`` clusters, ``-ovalue`` and
``-o value``, ``--name=value`` and ``--name value``, unambiguous ``--na`` prefixes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Syntax:
    """How one program reads its options."""

    values: str = ""  # short options taking a value (attached or the next word)
    optional: str = ""  # short options whose value, if any, is attached (sed -i.bak)
    long_values: frozenset[str] = frozenset()  # long options taking a value
    single_dash: bool = False  # find's ``-name`` style: every ``-word`` is one option
    permute: bool = True  # GNU: options may follow operands (False: the first operand ends them)


@dataclass
class Parsed:
    """Each option as (word index, name, value or None); the operands' word indices.
    Long options given by a prefix carry the full name when only one known option starts
    with it."""

    options: list[tuple[int, str, str | None]] = field(default_factory=list)
    operands: list[int] = field(default_factory=list)
    dashdash: int | None = None  # the ``--`` after which the program reads operands only
    count: int = 0  # how many words there are

    def names(self, before_dashdash: bool = False) -> set[str]:
        """Every option's name (only those before ``--``: the ones the program reads)."""
        end = self.dashdash if before_dashdash and self.dashdash is not None else self.count
        return {name for i, name, _ in self.options if i < end}

    def values_of(self, *names: str) -> list[tuple[int, str]]:
        return [(i, v) for i, n, v in self.options if n in names and v is not None]

    def real_operands(self) -> list[int]:
        """The operands as the program reads them: everything after ``--`` is one."""
        if self.dashdash is None:
            return self.operands
        before = [i for i in self.operands if i < self.dashdash]
        return before + list(range(self.dashdash + 1, self.count))


def parse(
    words: tuple[str, ...], syntax: Syntax, start: int = 1, known: Iterable[str] = ()
) -> Parsed:
    """Read ``words[start:]``. ``--`` ends the options only for a program that does not
    permute (a wrapper: what follows is the command); elsewhere the words after it are
    still looked at as options too (never less cautious than the program), and
    :meth:`Parsed.real_operands` gives them as the program reads them. ``known``: long
    options a prefix may stand for (GNU getopt takes ``--expr`` for ``--expression``)."""
    out = Parsed(count=len(words))
    longs = [*syntax.long_values, *known]
    i = start
    while i < len(words):
        word = words[i]
        if word == "--" and not syntax.permute:
            out.operands += range(i + 1, len(words))
            return out
        if word == "--" and out.dashdash is None:
            out.dashdash = i
        if word.startswith("--") and len(word) > 2:
            name, eq, value = word.partition("=")
            if known:
                found = set(expand(name, longs))
                name = found.pop() if len(found) == 1 else name
            if not eq and name in syntax.long_values and i + 1 < len(words):
                i += 1
                out.options.append((i - 1, name, words[i]))
            else:
                out.options.append((i, name, value if eq else None))
        elif word.startswith("-") and len(word) > 1 and syntax.single_dash:
            out.options.append((i, word, None))
        elif word.startswith("-") and len(word) > 1:
            i = _cluster(words, i, syntax, out)
        else:
            out.operands.append(i)
            if not syntax.permute:
                out.operands += range(i + 1, len(words))
                return out
        i += 1
    return out


def _cluster(words: tuple[str, ...], i: int, syntax: Syntax, out: Parsed) -> int:
    word = words[i]
    for k, char in enumerate(word[1:], 1):
        rest = word[k + 1 :]
        if char in syntax.values:
            if rest:
                out.options.append((i, "-" + char, rest))
            elif i + 1 < len(words):
                out.options.append((i, "-" + char, words[i + 1]))
                return i + 1
            else:
                out.options.append((i, "-" + char, None))
            return i
        if char in syntax.optional:
            out.options.append((i, "-" + char, rest or None))
            return i
        out.options.append((i, "-" + char, None))
    return i


def expand(name: str, known: Iterable[str], exact: Iterable[str] = ()) -> list[str]:
    """The long options ``name`` can stand for: itself, or every known option it is a
    prefix of (GNU getopt takes an unambiguous prefix; an ambiguous one is an error, but
    counting every candidate is never less cautious). ``exact`` are real options that are
    also prefixes of others (``--text`` is not ``--textconv``)."""
    known = list(known)
    if name in known or name in exact:
        return [name] if name in known else []
    if len(name) < 3:
        return []
    return [option for option in known if option.startswith(name)]
