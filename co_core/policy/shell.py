"""Split a shell command into every command it would run, with a real parser (bashlex).

An allow rule for ``ls *`` must never let ``ls; rm -rf ~`` through, so the policy engine
asks about each part on its own. A part is one of:

- ``exec``: a simple command as written (assignments such as ``PATH=... git`` included),
  found anywhere: lists, pipelines, subshells, ``$(...)``, backticks, ``<(...)``, loops,
  function bodies, the string given to ``eval`` / ``sh -c`` / ``trap``, and the command wrapped by
  ``sudo``, ``env``, ``xargs``, ``timeout``, ``find -exec`` and similar;
- ``write``: the target of an output redirection (``>``, ``>>``, ``&>``, ``>|``, ``<>``);
- ``read``: the source of an input redirection (``<``).

Anything the parser cannot read, or whose meaning depends on run-time values (a command
name built from a variable, ``eval "$X"``, a substitution hidden in ``${X:-$(...)}``, an
unquoted here-document, a shell reading its program from stdin or a script file) raises
:class:`Unparsable`; the engine then asks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["exec", "write", "read"]

SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "busybox"}
# Commands that run another command given as their arguments.
WRAPPERS = {
    "sudo",
    "doas",
    "env",
    "nohup",
    "nice",
    "ionice",
    "timeout",
    "time",
    "command",
    "builtin",
    "exec",
    "xargs",
    "stdbuf",
    "setsid",
    "chroot",
    "unbuffer",
    "watch",
    "strace",
    "flock",
}
FIND_EXEC = {"-exec", "-execdir", "-ok", "-okdir"}
_SKIPPABLE = re.compile(r"^(-.*|[A-Za-z_][A-Za-z0-9_]*=.*|\d+(\.\d+)?[smhd]?)$")
_DYNAMIC = ("$(", "`", "<(", ">(")
MAX_DEPTH = 8


class Unparsable(ValueError):
    """The command cannot be split with confidence; the caller must ask."""


@dataclass(frozen=True)
class Part:
    kind: Kind
    text: str


def split_command(command: str) -> list[Part]:
    """Every part ``command`` would run, in source order (duplicates removed)."""
    parts: list[Part] = []
    _split(command, parts, 0)
    seen: set[Part] = set()
    unique = []
    for part in parts:
        if part not in seen:
            seen.add(part)
            unique.append(part)
    if not unique:
        raise Unparsable("no command found")
    return unique


def _split(command: str, out: list[Part], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise Unparsable("commands nested too deeply")
    if "\x00" in command:
        raise Unparsable("NUL byte in command")
    if not command.strip():
        return
    import bashlex

    try:
        trees = bashlex.parse(command)
    except Exception as exc:  # bashlex raises several types, including NotImplementedError
        raise Unparsable(f"cannot parse: {type(exc).__name__}: {exc}") from None
    for tree in trees:
        _walk(tree, command, out, depth)


def _children(node: Any) -> list[Any]:
    kids: list[Any] = []
    for attr in ("parts", "list", "redirects"):
        value = getattr(node, attr, None)
        if isinstance(value, list):
            kids += value
    for attr in ("command", "output", "heredoc"):
        value = getattr(node, attr, None)
        if value is not None and hasattr(value, "kind"):
            kids.append(value)
    return kids


def _walk(node: Any, source: str, out: list[Part], depth: int) -> None:
    kind = node.kind
    if kind == "command":
        _command(node, source, out, depth)
    elif kind == "redirect":
        _redirect(node, source, out)
    elif kind == "parameter":
        if any(mark in node.value for mark in _DYNAMIC) or "${" in node.value:
            raise Unparsable(f"command hidden in parameter expansion ${{{node.value}}}")
    elif kind == "heredoc":
        if any(mark in node.value for mark in ("$(", "`")):
            raise Unparsable("command substitution inside a here-document")
    for child in _children(node):
        _walk(child, source, out, depth)


def _text(node: Any, source: str) -> str:
    start, end = node.pos
    return source[start:end]


def _command(node: Any, source: str, out: list[Part], depth: int) -> None:
    items = [p for p in node.parts if p.kind in ("word", "assignment")]
    if not items:
        return  # only redirections: handled by the walk
    out.append(Part("exec", " ".join(_text(p, source) for p in items)))
    words = [p for p in items if p.kind == "word"]
    if words:
        _inner(words, source, out, depth)


def _is_dynamic(word: Any) -> bool:
    return any(p.kind != "tilde" for p in getattr(word, "parts", []) or [])


def _inner(words: list[Any], source: str, out: list[Part], depth: int) -> None:
    """Commands hidden in the arguments of ``eval``, ``sh -c``, wrappers and ``find -exec``."""
    name = words[0]
    if _is_dynamic(name):
        raise Unparsable(f"command name is computed at run time: {_text(name, source)}")
    base = name.word.rsplit("/", 1)[-1]
    args = words[1:]
    if base == "eval":
        if any(_is_dynamic(w) for w in args):
            raise Unparsable("eval of a value computed at run time")
        _split(" ".join(w.word for w in args), out, depth + 1)
    elif base == "trap" and args and not args[0].word.startswith("-"):
        if _is_dynamic(args[0]):
            raise Unparsable("trap of a value computed at run time")
        _split(args[0].word, out, depth + 1)
    elif base in SHELLS:
        for i, word in enumerate(args):
            flag = word.word
            if flag.startswith("-") and not flag.startswith("--") and "c" in flag[1:]:
                if i + 1 >= len(args):
                    raise Unparsable(f"{base} -c without a command")
                if _is_dynamic(args[i + 1]):
                    raise Unparsable(f"{base} -c of a value computed at run time")
                _split(args[i + 1].word, out, depth + 1)
                break
        else:
            raise Unparsable(f"{base} would run code the policy cannot see (stdin or a script)")
    elif base in WRAPPERS:
        rest = list(args)
        while rest and _SKIPPABLE.match(rest[0].word):
            rest.pop(0)
        if rest:
            out.append(Part("exec", " ".join(_text(w, source) for w in rest)))
            _inner(rest, source, out, depth + 1)
    if base == "find" or base in WRAPPERS:
        for i, word in enumerate(args):
            if word.word in FIND_EXEC:
                tail = []
                for w in args[i + 1 :]:
                    if w.word in (";", "+"):
                        break
                    tail.append(w)
                if tail:
                    out.append(Part("exec", " ".join(_text(w, source) for w in tail)))
                    _inner(tail, source, out, depth + 1)


def _redirect(node: Any, source: str, out: list[Part]) -> None:
    kind = node.type
    target = node.output
    if kind in ("<<", "<<-", "<<<") or isinstance(target, int) or target is None:
        return  # here-docs, here-strings and fd duplication (2>&1) touch no file
    if kind in (">&", "<&") and target.word.isdigit():
        return
    text = target.word
    if any(p.kind != "tilde" for p in getattr(target, "parts", []) or []):
        text = _text(target, source)
    out.append(Part("read" if kind == "<" else "write", text))
