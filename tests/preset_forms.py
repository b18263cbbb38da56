"""Commands generated from the read-only preset's table itself, each marked listed or not.

For every row: the command with sample operands; each option it lists alone, and with its
value attached and separate, in ``--opt=V`` and ``--opt V`` form; short options in
clusters; every prefix of each long option; an option after ``--`` (an operand then);
an operand starting with ``-`` before ``--``; an option the row does not list; an operand
too many. Whether a spelling is a form of the row follows from the row's *reader* (does
it cluster, take values attached, read ``--``), as docs/policy.md states it, not from
Co's matcher: the test compares the two, then runs what the matcher allows under strace.
"""

from __future__ import annotations

import random
import re
import shlex
from dataclasses import dataclass

from co_core.policy.read_only import ROWS
from co_core.policy.shell.forms import (
    ATTACHED_SHORT,
    CLUSTERS,
    DASHDASH,
    PERMUTE,
    SEPARATE_LONG,
    Form,
    Option,
)

# A value of each kind that the programs accept (or reject harmlessly).
SAMPLE = {
    "FILE": "x", "DIR": "src", "PATH": "x", "N": "2", "COLS": "40", "SIZE": "3",
    "LIST": "1", "KEY": "1", "RANGE": "1,2", "TEXT": "a", "NAME": "root", "PATTERN": "x",
    "GLOB": "*.txt", "FORMAT": "%s", "SEP": ",", "DATE": "2020-01-01", "REV": "HEAD",
    "JSON": "1", "FILTER": ".", "SEDPRINT": "1p", "+FORMAT": "+%s", "WHEN": "never",
    "RADIX": "x", "TYPE": "f", "WORD": "a",
}  # fmt: skip
# Values the program needs to run at all (a row's option, or its operands).
VALUES = {
    ("ls", "--sort"): "size", ("ls", "--time"): "ctime", ("ls", "--time-style"): "iso",
    ("ls", "--format"): "long", ("ls", "--indicator-style"): "slash",
    ("ls", "--quoting-style"): "literal", ("nl", "-b"): "a", ("nl", "-n"): "rz",
    ("find", "-regextype"): "posix-extended", ("find", "-perm"): "644",
    ("numfmt", "--from"): "iec", ("numfmt", "--to"): "iec", ("numfmt", "--round"): "up",
    ("numfmt", "--format"): "%f", ("seq", "-f"): "%g", ("od", "-t"): "x1",
    ("df", "-t"): "tmpfs", ("df", "-x"): "tmpfs", ("rg", "-t"): "py", ("rg", "-T"): "py",
    ("rg", "--type"): "py", ("rg", "--type-not"): "py", ("rg", "--sort"): "path",
    ("rg", "--sortr"): "path", ("date", "-I"): "date", ("date", "--iso-8601"): "date",
    ("date", "--rfc-3339"): "date", ("git status", "--porcelain"): "v1",
    ("git status", "-u"): "no", ("git status", "--untracked-files"): "no",
    ("git status", "--ignored"): "no", ("git log", "--decorate"): "short",
    ("git log", "--date"): "short", ("git show", "--decorate"): "short",
    ("git show", "--date"): "short", ("git blame", "--date"): "short",
    ("git branch", "--sort"): "refname", ("git branch --list", "--sort"): "refname",
    ("git tag", "--sort"): "refname", ("git tag --list", "--sort"): "refname",
    ("git rev-parse", "--abbrev-ref"): "strict", ("git log", "--diff-filter"): "M",
    ("git diff", "--diff-filter"): "M", ("git show", "--diff-filter"): "M",
    ("find", "-type"): "f", ("find", "-xtype"): "f", ("id", "NAME"): "root",
    ("git remote get-url", "NAME"): "origin", ("git config --get", "NAME"): "core.bare",
    ("type", "NAME"): "ls", ("which", "NAME"): "ls", ("git blame", "REV"): "x",
    ("git cat-file", "REV"): "HEAD", ("git ls-tree", "REV"): "HEAD",
}  # fmt: skip


@dataclass(frozen=True)
class Generated:
    argv: tuple[str, ...]
    listed: bool  # a form of the row, as its reader reads it
    row: str
    variant: str  # what was generated: "alone", "attached", "prefix", ...
    primary: bool = False  # the option's plain spelling (always run under strace)
    text: str = ""  # a command written whole (pipes, redirections), instead of argv

    @property
    def command(self) -> str:
        return self.text or shlex.join(self.argv)


def value(row: Form, name: str, kind: str) -> str:
    return VALUES.get((row.name, name), SAMPLE[kind])


def operands(row: Form, given: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """The fewest operands the row needs (one where it takes any number of files)."""
    slots = row.operands[1:] if row.instead & given else row.operands
    out = []
    for slot in slots:
        if not slot.optional or (slot.repeat and slot.kind.files and not out):
            out.append(value(row, slot.kind.name, slot.kind.name))
    return out


def _with(row: Form, words: list[str], given: set[str]) -> tuple[str, ...]:
    needs = sorted(row.needs - given)[:1] if row.needs and not row.needs & given else []
    return (*row.command, *needs, *words, *operands(row, given | set(needs)))


def generate(rows: tuple[Form, ...] = ROWS) -> list[Generated]:
    found: list[Generated] = []
    for row in rows:
        found += _row(row)
    return list({g.argv: g for g in found}.values())


def _row(row: Form) -> list[Generated]:
    out = []
    if row.style not in ("test",):
        out.append(Generated(_with(row, [], set()), True, row.name, "plain", True))
    if row.style == "find":
        return out + _find(row)
    if row.style in ("words", "test"):
        return out + _words(row)
    for option in row.options:
        out += _option(row, option)
    out += _clusters(row)
    out += _edges(row)
    return out


def _option(row: Form, option: Option) -> list[Generated]:
    style, out = row.style, []
    given = set(option.names)
    for n, name in enumerate(option.names):
        first = n == 0  # the plain spelling run under strace; the others are sampled
        short = not name.startswith("--")
        if not option.values:
            out.append(Generated(_with(row, [name], given), True, row.name, "alone", first))
            if not short:
                out.append(Generated(_with(row, [f"{name}=x"], given), False, row.name, "=value on a flag"))  # fmt: skip
            out += _prefixes(row, name, given)
            continue
        v = [value(row, name, k.name) for k in option.values]
        if option.optional:
            out.append(Generated(_with(row, [name], given), True, row.name, "optional omitted", first))  # fmt: skip
            joined = f"{name}={v[0]}" if not short else f"{name}{v[0]}"
            out.append(Generated(_with(row, [joined], given), True, row.name, "optional attached"))  # fmt: skip
            out += _prefixes(row, name, given)
            continue
        separate = [name, *v]
        if short:
            listed = True
            out.append(Generated(_with(row, separate, given), listed, row.name, "separate", first))  # fmt: skip
            if len(v) == 1:
                out.append(Generated(_with(row, [name + v[0]], given), ATTACHED_SHORT[style], row.name, "attached"))  # fmt: skip
        else:
            attached_ok = len(v) == 1 and style != "jq"
            separate_ok = SEPARATE_LONG[style]
            out.append(Generated(_with(row, separate, given), separate_ok, row.name, "separate", first and separate_ok))  # fmt: skip
            if len(v) == 1:
                out.append(Generated(_with(row, [f"{name}={v[0]}"], given), attached_ok, row.name, "=value", first and not separate_ok))  # fmt: skip
            out += _prefixes(row, name, given)
    return out


def _prefixes(row: Form, name: str, given: set[str]) -> list[Generated]:
    """Every shorter spelling getopt might take for it: none is a form of the row."""
    out = []
    for end in range(3, len(name)):
        prefix = name[:end]
        if prefix in row.by_name:
            continue
        option = row.by_name[name]
        words = [prefix] if not option.values or option.optional else [prefix, "x"]
        out.append(Generated(_with(row, words, given), False, row.name, "prefix"))
    return out


def _clusters(row: Form) -> list[Generated]:
    """Short flags joined, and a flag joined with a value option, as the reader takes them."""
    flags = [o for o in row.options for n in o.names if len(n) == 2 and not o.values]
    takes = [o for o in row.options for n in o.names if len(n) == 2 and o.values and not o.optional]
    shorts = [n for o in flags for n in o.names if len(n) == 2]
    ok = CLUSTERS.get(row.style, False)
    out = []
    for a, b in zip(shorts, shorts[1:] + shorts[:1], strict=True):
        if a != b:
            word = a + b[1]
            if word in row.by_name:
                continue
            out.append(Generated(_with(row, [word], set()), ok, row.name, "cluster"))
    for option in takes:
        name = next(n for n in option.names if len(n) == 2)
        if shorts and len(option.values) == 1:
            v = value(row, name, option.values[0].name)
            word = shorts[0] + name[1]
            given = set(option.names)
            out.append(Generated(_with(row, [word, v], given), ok, row.name, "cluster, separate value"))  # fmt: skip
            attached = ok and ATTACHED_SHORT[row.style]
            out.append(Generated(_with(row, [word + v], given), attached, row.name, "cluster, attached value"))  # fmt: skip
    return out


def _edges(row: Form) -> list[Generated]:
    out = []
    unknown = next(f"-{c}" for c in "QYKJWqyjk9" if f"-{c}" not in row.by_name)
    out.append(Generated(_with(row, [unknown], set()), False, row.name, "unlisted short"))
    out.append(Generated(_with(row, ["--co-unlisted"], set()), False, row.name, "unlisted long"))
    rest = [s for s in row.operands if s.repeat]
    takes_dash = (
        DASHDASH.get(row.style, False)
        and rest
        and rest[-1].kind.name
        in (
            "FILE",
            "PATH",
            "TEXT",
            "REV",
            "NAME",
            "PATTERN",
        )
    )
    # after --, a word starting with - is an operand: a file it reads, or text
    argv = (*row.command, *sorted(row.needs)[:1], *operands(row), "--", "-z")
    if rest and PERMUTE[row.style] and operands(row):  # (past the first operand, -- is one)
        out.append(Generated(argv, bool(takes_dash), row.name, "operand after --"))
    bounded = row.operands and not any(s.repeat for s in row.operands)
    if bounded or not row.operands:
        extra = [*operands(row)] + ["x"] * (len(row.operands) + 1 - len(operands(row)))
        out.append(Generated(
            (*row.command, *sorted(row.needs)[:1], *extra), False, row.name, "operand too many"
        ))  # fmt: skip
    if row.plus:  # tail +3: GNU's old count form, only as the first word
        out.append(Generated((*row.command, "+3", *operands(row)), True, row.name, "+count", True))  # fmt: skip
        for word in ("+3f", "+f", "+3cf"):
            out.append(Generated((*row.command, word, *operands(row)), False, row.name, "+count and more"))  # fmt: skip
    if row.numeric:
        out.append(Generated(_with(row, ["-3"], set()), True, row.name, "count", True))
        if row.numeric == "first" and operands(row):
            late = (*row.command, *operands(row), "-3")
            out.append(Generated(late, False, row.name, "count not first"))
    return out


def _find(row: Form) -> list[Generated]:
    out = []
    for option in row.options:
        name = option.names[0]
        words = [name, *(value(row, name, k.name) for k in option.values)]
        out.append(Generated(("find", ".", *words), True, row.name, "test", True))
        shorter = name[:-1]
        if shorter in row.operators:
            out.append(Generated(("find", ".", shorter), True, row.name, "a shorter test"))
        elif shorter not in row.by_name:
            out.append(Generated(("find", ".", shorter, "x"), False, row.name, "prefix"))
    for operator in sorted(row.operators):
        if operator in ("(", ")", "!", ",", "-a", "-and", "-o", "-or", "-not"):
            continue
        out.append(Generated(("find", ".", operator), True, row.name, "operator", True))
    out.append(Generated(("find", ".", "(", "-name", "x", "-o", "!", "-type", "d", ")", "-print"), True, row.name, "expression", True))  # fmt: skip
    for word in ("-exec", "-execdir", "-ok", "-delete", "-fprint", "-fls", "-D", "-O3"):
        out.append(Generated(("find", ".", word, "x"), False, row.name, "unlisted"))
    return out


def _words(row: Form) -> list[Generated]:
    close = ["]"] if row.program == "[" else []
    out = [
        Generated((*row.command, "x", *close), True, row.name, "text", True),
        Generated((*row.command, "-n", "x", *close), True, row.name, "dash word"),
    ]
    if row.style == "test":
        out.append(Generated((*row.command, "-Q", "x", *close), False, row.name, "unlisted"))
        for operator in sorted(row.operators):
            binary = operator in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "-a", "-o")  # fmt: skip
            words = ["x", operator, "x"] if binary else [operator, "x"]
            out.append(Generated((*row.command, *words, *close), True, row.name, "operator", True))  # fmt: skip
        for word in ("-v", "-R"):
            out.append(Generated((*row.command, word, "x", *close), False, row.name, "unlisted"))
    return out


def sample(generated: list[Generated], budget: int, seed: int = 35) -> list[Generated]:
    """Every primary spelling, then a seeded sample of the other listed variants."""
    primary = [g for g in generated if g.listed and g.primary]
    others = [g for g in generated if g.listed and not g.primary]
    rng = random.Random(seed)
    room = max(0, budget - len(primary))
    return primary + rng.sample(others, min(room, len(others)))


# -- how the real program reads each option the table lists --------------------------------

# What each reader says when an option that takes the next word as its value is given none,
# and when an option that takes no value is given one; each names the option it read, so
# an abbreviation (a table listing `--comp` that the program reads as `--compile`) shows.
NEEDS_VALUE = {
    "getopt": "option '{long}' requires an argument|option requires an argument -- '{letter}'"
    "|argument '{long} <[^>]*>(\\.\\.\\.)?' requires a value|{long} takes (one|two) parameters?",
    "git": "option `{bare}' requires a value|switch `{letter}' requires a value",
    "git+": "option `{bare}' requires a value|switch `{letter}' requires a value",
    "getopt+": "option '{long}' requires an argument|option requires an argument -- '{letter}'",
    "jq": "{long} takes (one|two) parameters?",
}
NO_VALUE = {
    "getopt": "option '{long}' doesn't allow an argument",
    "git": "option `(no-no-)?{bare}' takes no value",  # --renames: --no-renames negated
    "git+": "option `{bare}' takes no value",
    "getopt+": "option '{long}' doesn't allow an argument",
}
NOT_ABBREVIATING = ("rg", "jq")  # clap and jq read only whole names (and say so otherwise)


@dataclass(frozen=True)
class Probe:
    command: str
    expect: str  # a regular expression the program's error output must match
    what: str  # what the table says


def probes(rows: tuple[Form, ...] = ROWS) -> list[Probe]:
    """For each option the table reads with the next word as its value: the option last,
    with nothing after it (the program must say it needs a value, and name that option);
    for each long option that takes no value: ``--name=x`` (the program must refuse the
    value, naming the option as the table spells it). Rows whose reader is not
    getopt's, git's or jq's (find, test, bash's builtins, git's revision options) are
    left to the strace run."""
    found: list[Probe] = []
    for row in rows:
        style = row.style
        if style not in NEEDS_VALUE:
            continue
        head = (*row.command, *sorted(row.needs)[:1])
        after = tuple(operands(row))  # where options may follow operands, they come first
        if PERMUTE[style]:
            head, after = (*head, *after), ()
        for option in row.options:
            for name in option.names:
                long = name if name.startswith("--") else ""
                fill = {"long": re.escape(long or name), "bare": re.escape(name[2:]),
                        "letter": re.escape(name[1:])}  # fmt: skip
                if option.values and not option.optional:
                    if long and not SEPARATE_LONG[style]:
                        continue
                    pattern = NEEDS_VALUE[style]
                    if not long:  # clap names the long option; jq has no short ones with values
                        pattern = pattern.replace("{long} <", "--[a-z-]+ <")
                    found.append(Probe(shlex.join((*head, name)), pattern.format(**fill),
                                       f"{row.name} {name}: the next word is its value"))  # fmt: skip
                elif not option.values and long and style in NO_VALUE:
                    if row.program in NOT_ABBREVIATING:
                        continue
                    found.append(Probe(shlex.join((*head, f"{name}=x", *after)), NO_VALUE[style].format(**fill),
                                       f"{row.name} {name}: takes no value"))  # fmt: skip
    return found
