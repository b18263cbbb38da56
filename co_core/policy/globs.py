"""Glob patterns over permission keys.

``**`` matches anything; ``*`` matches anything except ``/``; ``?`` one character except
``/``. In the command of a shell key (``shell:exec:git *``) a command is not a path, so
``*`` and ``?`` also match ``/``, and a trailing `` *`` also matches nothing at all
(``git *`` matches ``git``). A resource starting with ``~/`` also matches the home folder
spelled out.

A backslash makes the next ``*``, ``?``, ``~`` or ``\\`` literal (any other backslash is
itself): :func:`escape` turns a key into the pattern matching that key and nothing else,
which is how grants are kept ("always" to ``rm -rf build/*`` covers exactly that command).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

DEFAULT_SHELL_PREFIXES: tuple[str, ...] = ("shell:exec:",)
ESCAPABLE = frozenset("*?~\\")
# a pattern as tokens: a literal character, or one of these wildcards
STAR, DOUBLE_STAR, ANY = "*", "**", "?"


def escape(key: str) -> str:
    """The pattern that matches exactly ``key``."""
    return "".join("\\" + c if c in ESCAPABLE else c for c in key)


def literal(pattern: str) -> str | None:
    """The one key an exact pattern matches (``escape``'s inverse); None if it has wildcards."""
    out = []
    for is_wild, text in _tokens(pattern):
        if is_wild:
            return None
        out.append(text)
    return "".join(out)


@lru_cache(maxsize=4096)
def _tokens(pattern: str) -> tuple[tuple[bool, str], ...]:
    """``(True, wildcard)`` or ``(False, literal character)`` for each piece of ``pattern``."""
    out: list[tuple[bool, str]] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in ESCAPABLE:
            out.append((False, pattern[i + 1]))
            i += 2
        elif pattern.startswith("**", i):
            out.append((True, DOUBLE_STAR))
            i += 2
        elif c in "*?":
            out.append((True, c))
            i += 1
        else:
            out.append((False, c))
            i += 1
    return tuple(out)


def shell_prefix(key: str, prefixes: tuple[str, ...]) -> str | None:
    for prefix in prefixes:
        if key.startswith(prefix):
            return prefix
    return None


@lru_cache(maxsize=2048)
def compile_pattern(
    pattern: str, prefixes: tuple[str, ...] = DEFAULT_SHELL_PREFIXES
) -> re.Pattern[str]:
    prefix = shell_prefix(pattern, prefixes)
    if prefix is not None:
        body = _tokens(pattern[len(prefix) :])
        optional_tail = body[-2:] == ((False, " "), (True, STAR))
        if optional_tail:
            body = body[:-2]
        regex = re.escape(prefix) + _translate(body, star=".*", any_char=".")
        if optional_tail:
            regex += "(?: .*)?"
        return re.compile(regex + r"\Z", re.DOTALL)
    head, resource = _split_resource(pattern)
    regex = _translate(_tokens(head), star="[^/]*", any_char="[^/]")
    tokens = _tokens(resource)
    if tokens[:2] == ((False, "~"), (False, "/")) and not resource.startswith("\\"):
        home = re.escape(str(Path.home()))
        regex += f"(?:~|{home})" + _translate(tokens[1:], star="[^/]*", any_char="[^/]")
    else:
        regex += _translate(tokens, star="[^/]*", any_char="[^/]")
    return re.compile(regex + r"\Z", re.DOTALL)


def _split_resource(pattern: str) -> tuple[str, str]:
    """``fs:read:~/x`` -> (``fs:read:``, ``~/x``): the resource follows the second colon."""
    first = pattern.find(":")
    second = pattern.find(":", first + 1) if first >= 0 else -1
    if second < 0:
        return pattern, ""
    return pattern[: second + 1], pattern[second + 1 :]


def _translate(tokens: tuple[tuple[bool, str], ...], *, star: str, any_char: str) -> str:
    wild = {DOUBLE_STAR: ".*", STAR: star, ANY: any_char}
    return "".join(wild[text] if is_wild else re.escape(text) for is_wild, text in tokens)


def matches(pattern: str, key: str, prefixes: tuple[str, ...] = DEFAULT_SHELL_PREFIXES) -> bool:
    return compile_pattern(pattern, prefixes).match(key) is not None


def specificity(pattern: str) -> int:
    """How many literal characters a pattern has: the more, the more specific."""
    return sum(not is_wild for is_wild, _ in _tokens(pattern))


def is_exact(pattern: str) -> bool:
    return literal(pattern) is not None
