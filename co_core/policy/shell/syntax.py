"""A strict reader for the part of bash whose meaning is fixed when it is read, and its writer.

It accepts only commands made of literal words (quotes removed, no expansion of any kind),
joined by ``;``, ``&``, ``&&``, ``||``, pipes, new lines, ``( )`` and ``{ }``, with
redirections to literal files and here-documents whose delimiter is unquoted and whose
body is plain text. Everything else raises :class:`NotLiteral` with a reason a person
understands. :func:`render` writes a program back out in one canonical spelling (every
word quoted by Co, ``shlex.quote`` style), which is what Co then runs: what bash reads
from that text is exactly the tree read here, whatever the original spelling was.

Globs are the one run-time value accepted: ``*`` and ``?`` in a word that starts with a
literal character other than ``-`` (``src/*.py``), since such a word can only expand to
file names that begin the same way, never to an option.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

BLANK = " \t"
META = " \t\n;&|()<>"
# Longest first: the tokenizer takes the first operator that matches.
OPERATORS = (
    ";;&", ";;", ";&", "&&", "||", "|&", "&>>", "&>", "<<<", "<<-", "<<",
    "<&", ">&", "<>", ">>", ">|", "<", ">", ";", "&", "|", "(", ")",
)  # fmt: skip
REDIRECTS = {"<", ">", ">>", "<>", ">|", "&>", "&>>", "<&", ">&", "<<", "<<-", "<<<"}
RESERVED = {
    "if", "then", "elif", "else", "fi", "case", "esac", "for", "select", "while", "until",
    "do", "done", "in", "function", "time", "coproc", "{", "}", "!", "[[", "]]",
}  # fmt: skip
_SAFE = re.compile(r"[^\w@%+=:,./-]", re.ASCII)  # shlex.quote's safe characters
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_DELIMITER = re.compile(r"[A-Za-z0-9_.-]+")
_OPERATOR = re.compile("|".join(re.escape(op) for op in OPERATORS))  # in order: longest first


class NotLiteral(ValueError):
    """The command uses something whose meaning is decided when it runs (the message says what)."""


@dataclass(frozen=True)
class Word:
    """A word after quote removal. ``live`` are the positions of characters that were
    neither quoted nor escaped: only those can be special (globs, ``~``, ``NAME=``)."""

    text: str
    live: frozenset[int] = frozenset()

    def all_live(self) -> bool:
        return len(self.live) == len(self.text)

    @property
    def globs(self) -> tuple[int, ...]:
        return tuple(i for i in sorted(self.live) if self.text[i] in "*?")

    @property
    def tilde(self) -> bool:
        """Starts with a live ``~`` (home folder): ``~`` or ``~/…``, the only forms read."""
        return 0 in self.live and self.text.startswith("~")

    def render(self) -> str:
        """The word as Co writes it: quoted where needed, glob characters and a leading
        ``~`` left live."""
        if self.tilde:  # bash expands ~ only when the / after it is unquoted too
            rest = Word(self.text[2:], frozenset(i - 2 for i in self.live if i > 1))
            return self.text[:2] + (rest.render() if rest.text else "")
        globs = self.globs
        if not globs:
            return quote(self.text)
        out, start = [], 0
        for i in globs:
            if i > start:
                out.append(quote(self.text[start:i]))
            out.append(self.text[i])
            start = i + 1
        if start < len(self.text):
            out.append(quote(self.text[start:]))
        return "".join(out)


def quote(text: str) -> str:
    """``shlex.quote``: safe words stay as they are, anything else in single quotes."""
    if not text:
        return "''"
    if _SAFE.search(text) is None or text in ("[", "]"):  # a lone bracket is no pattern
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


@dataclass(frozen=True)
class Redirect:
    op: str  # one of REDIRECTS
    target: Word
    fd: int | None = None
    body: str | None = None  # a here-document's text

    @property
    def duplicates(self) -> bool:
        """``2>&1``, ``<&0``, ``>&-``: another descriptor, no file."""
        return self.op in ("<&", ">&") and (self.target.text.isdigit() or self.target.text == "-")


@dataclass(frozen=True)
class Simple:
    assignments: tuple[tuple[str, Word], ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]


@dataclass(frozen=True)
class Group:
    body: Program
    subshell: bool
    redirects: tuple[Redirect, ...]


Command = Simple | Group


@dataclass(frozen=True)
class Pipeline:
    commands: tuple[Command, ...]
    stderr_too: tuple[bool, ...]  # ``|&`` after each command but the last
    negated: bool = False


@dataclass(frozen=True)
class AndOr:
    first: Pipeline
    rest: tuple[tuple[str, Pipeline], ...] = ()


@dataclass(frozen=True)
class Program:
    items: tuple[tuple[AndOr, bool], ...]  # (list, run in the background)


# -- reading ------------------------------------------------------------------------------


@dataclass
class _Token:
    kind: str  # "word", "op", "newline", "io", "eof"
    value: str = ""
    word: Word | None = None
    body: str | None = None  # for the delimiter word of a here-document


def _describe_dollar(text: str, i: int) -> str:
    nxt = text[i + 1 : i + 3]
    if nxt.startswith("(("):
        what = "arithmetic"
    elif nxt.startswith("("):
        what = "a command substitution"
    elif nxt.startswith("{"):
        what = "a parameter expansion"
    elif nxt.startswith("'"):
        what = "an ANSI-C quoted string"
    elif nxt.startswith('"'):
        what = "a translated string"
    else:
        what = "a variable"
    snippet = re.split(r"[\s;|&<>]", text[i : i + 24])[0]
    if what == "a variable":
        snippet = re.match(r"\$(\w+|.)", snippet + " ").group()  # type: ignore[union-attr]
    return f"{what} ({snippet}) is expanded when it runs"


@dataclass
class _Lexer:
    text: str
    i: int = 0
    tokens: list[_Token] = field(default_factory=list)
    pending: list[tuple[_Token, bool]] = field(default_factory=list)  # here-docs to read

    def run(self) -> list[_Token]:
        text = self.text
        while self.i < len(text):
            c = text[self.i]
            if c in BLANK:
                self.i += 1
            elif text.startswith("\\\n", self.i):
                self.i += 2
            elif c == "\n":
                self.tokens.append(_Token("newline"))
                self.i += 1
                self._read_heredocs()
            elif c == "#":
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif (op := self._operator()) is not None:
                self._op(op)
            else:
                self._word()
        if self.pending:
            raise NotLiteral("a here-document has no end line")
        self.tokens.append(_Token("eof"))
        return self.tokens

    def _operator(self) -> str | None:
        found = _OPERATOR.match(self.text, self.i)
        return None if found is None else found.group()

    def _op(self, op: str) -> None:
        after = self.text[self.i + len(op) : self.i + len(op) + 1]
        if op in ("<", ">") and after == "(":
            raise NotLiteral(f"a process substitution ({op}(…)) runs a command when it runs")
        if op == "(" and after == "(":
            raise NotLiteral("arithmetic (( … )) is evaluated when it runs")
        if op in (";;", ";;&", ";&"):
            raise NotLiteral(f"{op!r} belongs to a case statement, which Co does not read")
        self.i += len(op)
        self.tokens.append(_Token("op", op))
        if op in ("<<", "<<-"):
            self._heredoc_start(strip_tabs=op == "<<-")

    def _heredoc_start(self, strip_tabs: bool) -> None:
        while self.i < len(self.text) and self.text[self.i] in BLANK:
            self.i += 1
        if self.i >= len(self.text) or self.text[self.i] in META:
            raise NotLiteral("a here-document without a delimiter")
        self._word()
        token = self.tokens[-1]
        word = token.word
        if word is None:
            raise NotLiteral("a here-document delimiter Co does not read")
        if not word.all_live():
            raise NotLiteral(
                "a here-document with a quoted delimiter (Co reads only here-documents "
                "whose delimiter is unquoted and whose text is plain)"
            )
        if _DELIMITER.fullmatch(word.text) is None:
            raise NotLiteral(f"a here-document delimiter Co does not read: {word.text!r}")
        self.pending.append((token, strip_tabs))

    def _read_heredocs(self) -> None:
        text = self.text
        for token, strip_tabs in self.pending:
            assert token.word is not None
            delimiter, lines = token.word.text, []
            while True:
                if self.i >= len(text):
                    raise NotLiteral(f"the here-document has no end line {delimiter!r}")
                end = text.find("\n", self.i)
                line = text[self.i : len(text) if end < 0 else end]
                self.i = len(text) if end < 0 else end + 1
                if strip_tabs:
                    line = line.lstrip("\t")
                if line == delimiter:
                    break
                if end < 0:
                    raise NotLiteral(f"the here-document has no end line {delimiter!r}")
                lines.append(line + "\n")
            body = "".join(lines)
            for mark in ("$", "`", "\\"):
                if mark in body:
                    raise NotLiteral(
                        f"the here-document's text has {mark!r}: it is expanded when it runs"
                    )
            token.body = body
        self.pending = []

    def _word(self) -> None:
        text, start = self.text, self.i
        chars: list[str] = []
        live: set[int] = set()
        i = self.i
        while i < len(text) and text[i] not in META:
            c = text[i]
            if c == "\\":
                if text.startswith("\\\n", i):
                    i += 2
                    continue
                if i + 1 >= len(text):
                    raise NotLiteral("the command ends with a lone backslash")
                chars.append(text[i + 1])
                i += 2
            elif c == "'":
                end = text.find("'", i + 1)
                if end < 0:
                    raise NotLiteral("a quote is never closed")
                chars.extend(text[i + 1 : end])
                i = end + 1
            elif c == '"':
                i = self._double_quoted(i, chars)
            elif c == "$":
                raise NotLiteral(_describe_dollar(text, i))
            elif c == "`":
                raise NotLiteral("a command substitution (`…`) runs a command when it runs")
            else:
                live.add(len(chars))
                chars.append(c)
                i += 1
        self.i = i
        word = Word("".join(chars), frozenset(live))
        _check_word(word, text[start:i])
        if (
            re.fullmatch(r"\{\w+\}", word.text)
            and word.all_live()
            and text[i : i + 1] in ("<", ">")
        ):
            raise NotLiteral(f"{word.text} names a file descriptor by a variable it sets")
        if word.text.isdigit() and word.all_live() and text[i : i + 1] in ("<", ">"):
            self.tokens.append(_Token("io", word.text))
        else:
            self.tokens.append(_Token("word", word.text, word))

    def _double_quoted(self, i: int, chars: list[str]) -> int:
        text = self.text
        i += 1
        while i < len(text):
            c = text[i]
            if c == '"':
                return i + 1
            if c == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
                if text[i + 1] != "\n":
                    chars.append(text[i + 1])
                i += 2
            elif c == "$":
                raise NotLiteral(_describe_dollar(text, i))
            elif c == "`":
                raise NotLiteral("a command substitution (`…`) runs a command when it runs")
            else:
                chars.append(c)
                i += 1
        raise NotLiteral("a quote is never closed")


def _check_word(word: Word, source: str) -> None:
    """Refuse the unquoted characters that make bash compute a word: ~, {a,b}, [ab]."""
    text, live = word.text, word.live
    if 0 in live and text.startswith("~") and not (text == "~" or text.startswith("~/")):
        raise NotLiteral(f"{source}: ~NAME, ~+ and ~- are folders known only when it runs")
    if any(text[i] == "{" for i in live) and (any(text[i] == "," for i in live) or ".." in text):
        raise NotLiteral(f"{source} is a brace expansion, expanded into several words")
    if text != "[" and any(text[i] == "[" for i in live):
        raise NotLiteral(f"{source} has a [ pattern, matched against file names when it runs")


@dataclass
class _Parser:
    tokens: list[_Token]
    i: int = 0

    def peek(self) -> _Token:
        return self.tokens[self.i]

    def take(self) -> _Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def at_word(self, *texts: str) -> bool:
        token = self.peek()
        return (
            token.kind == "word"
            and token.word is not None
            and token.word.all_live()
            and token.word.text in texts
        )

    def at_op(self, *ops: str) -> bool:
        token = self.peek()
        return token.kind == "op" and token.value in ops

    def newlines(self) -> None:
        while self.peek().kind == "newline":
            self.i += 1

    def program(self, end: str) -> Program:
        items: list[tuple[AndOr, bool]] = []
        self.newlines()
        while not self._at_end(end):
            first = self.and_or()
            background = False
            if self.at_op("&"):
                background = True
                self.take()
            elif self.at_op(";") or self.peek().kind == "newline":
                self.take()
            elif not self._at_end(end):
                raise NotLiteral(f"unexpected {self._shown()}")
            items.append((first, background))
            self.newlines()
        if not items:
            raise NotLiteral("there is no command")
        return Program(tuple(items))

    def _at_end(self, end: str) -> bool:
        token = self.peek()
        if end == "eof":
            return token.kind == "eof"
        if end == ")":
            return self.at_op(")") or token.kind == "eof"
        return self.at_word("}") or token.kind == "eof"

    def _shown(self) -> str:
        token = self.peek()
        return {"newline": "line break", "eof": "end"}.get(token.kind, repr(token.value))

    def and_or(self) -> AndOr:
        first = self.pipeline()
        rest = []
        while self.at_op("&&", "||"):
            op = self.take().value
            self.newlines()
            rest.append((op, self.pipeline()))
        return AndOr(first, tuple(rest))

    def pipeline(self) -> Pipeline:
        negated = False
        if self.at_word("!"):
            self.take()
            negated = True
        commands = [self.command()]
        stderr = []
        while self.at_op("|", "|&"):
            stderr.append(self.take().value == "|&")
            self.newlines()
            commands.append(self.command())
        return Pipeline(tuple(commands), tuple(stderr), negated)

    def command(self) -> Command:
        subshell = self.at_op("(")
        if not (subshell or self.at_word("{")):
            return self.simple()
        self.take()
        end = ")" if subshell else "}"
        body = self.program(end)
        if not (self.at_op(")") if subshell else self.at_word("}")):
            raise NotLiteral(f"a {'(' if subshell else '{'} is never closed")
        self.take()
        return Group(body, subshell, self._redirects_only())

    def _redirects_only(self) -> tuple[Redirect, ...]:
        found = []
        while self.peek().kind == "io" or (self.at_op(*REDIRECTS)):
            found.append(self.redirect())
        if self.peek().kind == "word" or self.at_op("("):
            raise NotLiteral(f"unexpected {self._shown()} after a group")
        return tuple(found)

    def simple(self) -> Simple:
        assignments: list[tuple[str, Word]] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        while True:
            token = self.peek()
            if token.kind == "io" or self.at_op(*REDIRECTS):
                redirects.append(self.redirect())
            elif token.kind == "word":
                word = token.word
                assert word is not None
                if not words and (found := _assignment(word)) is not None:
                    assignments.append(found)
                elif not words and word.all_live() and word.text in RESERVED:
                    raise NotLiteral(
                        f"`{word.text}`: conditions, loops, functions and other compound "
                        "commands are not read by Co"
                    )
                else:
                    words.append(word)
                self.take()
            elif self.at_op("("):
                raise NotLiteral("a function definition or a stray (")
            else:
                break
        if not (assignments or words or redirects):
            raise NotLiteral(f"a command is missing before {self._shown()}")
        return Simple(tuple(assignments), tuple(words), tuple(redirects))

    def redirect(self) -> Redirect:
        fd = None
        if self.peek().kind == "io":
            fd = int(self.take().value)
        if not self.at_op(*REDIRECTS):
            raise NotLiteral(f"unexpected {self._shown()}")
        op = self.take().value
        token = self.take()
        if token.kind != "word" or token.word is None:
            raise NotLiteral(f"{op} is not followed by a file name")
        if op in ("<<", "<<-"):
            return Redirect("<<", token.word, fd, token.body)
        target = token.word
        if op not in ("<<<",) and target.globs:
            raise NotLiteral(f"the file name {target.text!r} is a pattern matched when it runs")
        redirect = Redirect(op, target, fd)
        if op == ">&" and not redirect.duplicates:
            if fd is not None:
                raise NotLiteral(f"{fd}>&{target.text} is ambiguous")
            return Redirect("&>", target)
        if op == "<&" and not redirect.duplicates:
            raise NotLiteral(f"<&{target.text} is not a file descriptor")
        return redirect


def _assignment(word: Word) -> tuple[str, Word] | None:
    """``NAME=value`` (bash reads it as an assignment only when ``NAME=`` is unquoted)."""
    found = _ASSIGNMENT.match(word.text)
    if found is None or any(i not in word.live for i in range(found.end())):
        return None
    name = found.group(1)
    if found.group(2):
        raise NotLiteral(f"{name}+=… appends to a value known only when it runs")
    start = found.end()
    value = Word(word.text[start:], frozenset(i - start for i in word.live if i >= start))
    for i in value.live:
        if value.text[i] == "~" and (i == 0 or value.text[i - 1] == ":"):
            raise NotLiteral(f"the value of {name} has ~, your home folder, decided when it runs")
    return name, value


def read(text: str) -> Program:
    """The program ``text`` is, or NotLiteral saying what keeps its meaning open."""
    if "\x00" in text:
        raise NotLiteral("the command has a NUL byte")
    parser = _Parser(_Lexer(text).run())
    program = parser.program("eof")
    if parser.peek().kind != "eof":
        raise NotLiteral(f"unexpected {parser._shown()}")
    return program


# -- writing ------------------------------------------------------------------------------


def render_words(assignments: tuple[tuple[str, Word], ...], words: tuple[Word, ...]) -> list[str]:
    """A simple command's words as Co writes them. The command name is quoted when bash
    would otherwise read it as a keyword or an assignment."""
    out = [f"{name}={value.render()}" for name, value in assignments]
    for i, word in enumerate(words):
        text = word.render()
        if i == 0 and (text in RESERVED or _ASSIGNMENT.match(text)):
            text = "'" + word.text.replace("'", "'\"'\"'") + "'"
        out.append(text)
    return out


@dataclass
class _Writer:
    posix: bool
    bodies: list[str] = field(default_factory=list)

    def program(self, program: Program) -> str:
        out = ""
        for n, (item, background) in enumerate(program.items):
            if n:
                out += " " if program.items[n - 1][1] else "; "
            out += self.and_or(item) + (" &" if background else "")
        return out

    def and_or(self, item: AndOr) -> str:
        out = self.pipeline(item.first)
        for op, pipeline in item.rest:
            out += f" {op} {self.pipeline(pipeline)}"
        return out

    def pipeline(self, pipeline: Pipeline) -> str:
        out = "! " if pipeline.negated else ""
        for n, command in enumerate(pipeline.commands):
            if n:
                out += " | "
            out += self.command(command)
            if n < len(pipeline.stderr_too) and pipeline.stderr_too[n]:
                out += " 2>&1"
        return out

    def command(self, command: Command) -> str:
        if isinstance(command, Group):
            inner = self.program(command.body)
            if command.subshell:
                text = f"( {inner} )"
            else:
                text = "{ " + inner + (" }" if command.body.items[-1][1] else "; }")
            return " ".join([text, *self.redirects(command.redirects)])
        words = render_words(command.assignments, command.words)
        return " ".join([*words, *self.redirects(command.redirects)])

    def redirects(self, redirects: tuple[Redirect, ...]) -> list[str]:
        out = []
        for r in redirects:
            fd = "" if r.fd is None else str(r.fd)
            if r.op == "<<":
                self.bodies.append(f"{r.body}{r.target.text}\n")
                out.append(f"{fd}<<{r.target.text}")
            elif r.op in ("&>", "&>>"):
                out.append(f"{r.op[1:]} {r.target.render()} 2>&1")
            elif r.duplicates:
                out.append(f"{fd}{r.op}{r.target.text}")
            elif r.op == "<<<" and self.posix:
                raise NotLiteral("a here-string (<<<) is bash only; sh reads it differently")
            else:
                out.append(f"{fd}{r.op} {r.target.render()}")
        return out


def render(program: Program, *, posix: bool = False) -> str:
    """The program as Co runs it. ``posix``: for ``sh -c`` (dash), so no bash-only syntax."""
    writer = _Writer(posix)
    line = writer.program(program)
    if writer.bodies:
        return line + "\n" + "".join(writer.bodies)
    return line
