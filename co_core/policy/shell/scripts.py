"""What a sed script or an awk program does besides reading: run commands, write files.

``sed -n 1,5p`` and ``awk '{print $1}'`` only read, but the same programs run commands
(sed's ``e`` and ``s///e``, awk's ``system()`` and ``| "cmd"``) and write files (sed's
``w``, awk's ``print > "file"``). These readers walk the script far enough to find those;
whatever they cannot follow counts as a risk too, so a script Co cannot read is never
taken for a harmless one.
"""

from __future__ import annotations

import re

_SED_SIMPLE = set("=dDgGhHnNpPxzF")
_SED_NUMBER = set("qQlL")


class _Unreadable(ValueError):
    pass


def sed_risks(script: str) -> list[str]:
    """What ``script`` does besides reading and printing (empty: nothing). Read twice,
    with a bracket expression holding the delimiter (``s/[/]/x/``, as GNU sed and busybox
    read it) and without (as older seds do): a script is harmless only if both readings
    say so."""
    risks: list[str] = []
    for brackets in (True, False):
        try:
            risks += [r for r in _Sed(script, brackets).run() if r not in risks]
        except (_Unreadable, IndexError):
            return ["it is a sed script Co cannot read"]
    return risks


# A label (``:a``, ``b a``) as every sed reads it: no blanks in it, and nothing after it
# but the end of the command (GNU sed ends a label at a blank, older ones at ``;``).
_LABEL = re.compile(r"[ \t]*[^\s;}]*[ \t]*(?=$|[\n;}])")
_VERSION = re.compile(r"[ \t]*[0-9.]*[ \t]*(?=$|[\n;}])")


class _Sed:
    def __init__(self, text: str, brackets: bool = True) -> None:
        self.s, self.i = text, 0
        self.brackets = brackets
        self.risks: list[str] = []

    def run(self) -> list[str]:
        s = self.s
        while True:
            while self.i < len(s) and s[self.i] in " \t\n;":
                self.i += 1
            if self.i >= len(s):
                return self.risks
            self._address()
            if self._peek() == ",":
                self.i += 1
                self._address(second=True)
            self._blanks()
            while self._peek() == "!":
                self.i += 1
                self._blanks()
            self._command(s[self.i])

    def _peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def _blanks(self) -> None:
        while self._peek() in (" ", "\t"):
            self.i += 1

    def _address(self, second: bool = False) -> None:
        c = self._peek()
        if second and c in "+~":
            self.i += 1
            c = self._peek()
        if c.isdigit():
            while self._peek().isdigit() or self._peek() == "~":
                self.i += 1
        elif c == "$":
            self.i += 1
        elif c in ("/", "\\"):
            if c == "\\":
                self.i += 1
            delimiter = self.s[self.i]
            self.i += 1
            self._until(delimiter, regex=True)
            while self._peek() in ("I", "M"):
                self.i += 1

    def _until(self, delimiter: str, regex: bool = False) -> str:
        """Skip to the unescaped ``delimiter`` (in a regular expression, not one inside a
        bracket expression, when reading with brackets); returns what was skipped."""
        start = self.i
        while True:
            c = self.s[self.i]
            if c == "[" and regex and self.brackets:
                self._bracket()
            elif c == "\\":
                self.i += 2
            elif c == delimiter:
                self.i += 1
                return self.s[start : self.i - 1]
            elif c == "\n" and delimiter != "\n":
                raise _Unreadable
            else:
                self.i += 1

    def _bracket(self) -> None:
        """Past ``[...]``: a ``]`` first (after ``^``) is a member, ``[:alpha:]`` a class."""
        self.i += 1
        if self._peek() == "^":
            self.i += 1
        if self._peek() == "]":
            self.i += 1
        while True:
            c = self.s[self.i]
            if c == "\n":
                raise _Unreadable
            if c == "[" and self.s[self.i + 1 : self.i + 2] in (":", ".", "="):
                end = self.s.find(self.s[self.i + 1] + "]", self.i + 2)
                if end < 0:
                    raise _Unreadable
                self.i = end + 2
            elif c == "]":
                self.i += 1
                return
            else:
                self.i += 1

    def _rest_of_line(self) -> str:
        end = self.s.find("\n", self.i)
        end = len(self.s) if end < 0 else end
        text, self.i = self.s[self.i : end], end
        return text

    def _command(self, c: str) -> None:
        self.i += 1
        if c in "{}" or c in _SED_SIMPLE:
            return
        if c == "#" or c in "aic":
            self._text_argument(c)
        elif c in ":btT":
            self._match(_LABEL)
        elif c == "v":
            self._match(_VERSION)
        elif c in _SED_NUMBER:
            self._blanks()
            while self._peek().isdigit():
                self.i += 1
        elif c in "rR":
            self._rest_of_line()
        elif c in "wW":
            self.risks.append(f"its {c} command writes a file")
            self._rest_of_line()
        elif c == "e":
            self.risks.append("its e command runs a command")
            self._rest_of_line()
        elif c in "sy":
            self._substitute(c)
        else:
            raise _Unreadable

    def _match(self, pattern: re.Pattern[str]) -> None:
        found = pattern.match(self.s, self.i)
        if found is None:
            raise _Unreadable  # ":a e touch x": seds disagree on where the label ends
        self.i = found.end()

    def _text_argument(self, c: str) -> None:
        """``a``, ``i``, ``c`` text (to the end of the line, ``\\``-continued) or a comment."""
        if c == "#":
            self._rest_of_line()
            return
        while True:
            line = self._rest_of_line()
            if not line.endswith("\\") or self.i >= len(self.s):
                return
            self.i += 1

    def _substitute(self, c: str) -> None:
        delimiter = self.s[self.i]
        if delimiter in "\n\\":
            raise _Unreadable
        self.i += 1
        self._until(delimiter, regex=c == "s")
        self._until(delimiter)
        if c == "y":
            return
        while self._peek() not in ("", "\n", ";", "}"):
            flag = self.s[self.i]
            self.i += 1
            if flag == "e":
                self.risks.append("its s///e flag runs the result as a command")
            elif flag == "w":
                self.risks.append("its s///w flag writes a file")
                self._rest_of_line()
            elif not (flag.isdigit() or flag in "gpiImM \t"):
                raise _Unreadable


# -- awk ----------------------------------------------------------------------------------

# After these, a ``/`` starts a regular expression (awk's own rule); after anything else
# (a name, a number, ``)`` or ``]``) it divides.
_REGEX_AFTER = set("(,{};!~&|=<>?:+-*%^\n")
_AWK_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def awk_risks(program: str) -> list[str]:
    """What an awk program does besides reading and printing (empty: nothing)."""
    program = program.replace("\\\n", "")  # a line continuation joins the two lines
    risks = []
    if re.search(r"\bsystem\s*\(", program):
        risks.append("it calls system(), which runs a command")
    if "@" in program:
        risks.append("it may load other code or call a function by name (gawk's @)")
    try:
        tokens = _awk_tokens(program)
    except _Unreadable:
        return [*risks, "it is an awk program Co cannot read"]
    if any(t in ("|", "|&") for t in tokens):
        risks.append("it pipes to or from a command (|), which runs it")
    if _print_redirects(tokens):
        risks.append("it writes a file (print > file)")
    return risks


def _awk_tokens(program: str) -> list[str]:
    """The program's tokens, strings and regular expressions replaced by placeholders."""
    tokens: list[str] = []
    i, n = 0, len(program)
    while i < n:
        c = program[i]
        if c == "\\":
            raise _Unreadable  # a backslash outside a string or a regular expression
        if c in " \t" or (c == "\n" and tokens and tokens[-1] == "\n"):
            i += 1
        elif c == "#":
            end = program.find("\n", i)
            i = n if end < 0 else end
        elif c == '"':
            i = _skip_quoted(program, i, '"')
            tokens.append("STRING")
        elif c == "/" and (not tokens or tokens[-1][-1] in _REGEX_AFTER or _keyword(tokens)):
            i = _skip_quoted(program, i, "/")
            tokens.append("REGEX")
        elif (m := _AWK_WORD.match(program, i)) is not None:
            tokens.append(m.group())
            i = m.end()
        elif program.startswith(("||", "|&", ">>", "&&", "==", "!=", "<=", ">="), i):
            tokens.append(program[i : i + 2])
            i += 2
        else:
            tokens.append(c)
            i += 1
    return tokens


def _keyword(tokens: list[str]) -> bool:
    return tokens[-1] in ("print", "printf", "return", "in", "getline")


def _skip_quoted(text: str, i: int, end: str) -> int:
    i += 1
    in_bracket = False
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "\n":
            raise _Unreadable
        if end == "/" and c == "[":
            in_bracket = True
        elif end == "/" and c == "]":
            in_bracket = False
        elif c == end and not in_bracket:
            return i + 1
        i += 1
    raise _Unreadable


def _print_redirects(tokens: list[str]) -> bool:
    """``print … > f`` / ``>> f``: outside parentheses, ``>`` in a print statement writes."""
    in_print, depth = False, 0
    for token in tokens:
        if token in ("print", "printf"):
            in_print, depth = True, 0
        elif not in_print:
            continue
        elif token in ("(", "["):
            depth += 1
        elif token in (")", "]"):
            depth -= 1
        elif token in (";", "\n", "}", "{") and depth <= 0:
            in_print = False
        elif token in (">", ">>") and depth <= 0:
            return True
    return False
