"""Glob patterns over permission keys.

``**`` matches anything; ``*`` matches anything except ``/``; ``?`` one character except
``/``. In the command of a shell key (``shell:exec:git *``) a command is not a path, so
``*`` and ``?`` also match ``/``, and a trailing `` *`` also matches nothing at all
(``git *`` matches ``git``). A resource starting with ``~/`` also matches the home folder
spelled out.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

DEFAULT_SHELL_PREFIXES: tuple[str, ...] = ("shell:exec:",)


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
        body = pattern[len(prefix) :]
        optional_tail = body.endswith(" *")
        if optional_tail:
            body = body[:-2]
        regex = re.escape(prefix) + _translate(body, star=".*", any_char=".")
        if optional_tail:
            regex += "(?: .*)?"
        return re.compile(regex + r"\Z", re.DOTALL)
    head, resource = _split_resource(pattern)
    regex = _translate(head, star="[^/]*", any_char="[^/]")
    if resource.startswith("~/"):
        home = re.escape(str(Path.home()))
        regex += f"(?:~|{home})" + _translate(resource[1:], star="[^/]*", any_char="[^/]")
    else:
        regex += _translate(resource, star="[^/]*", any_char="[^/]")
    return re.compile(regex + r"\Z", re.DOTALL)


def _split_resource(pattern: str) -> tuple[str, str]:
    """``fs:read:~/x`` -> (``fs:read:``, ``~/x``): the resource follows the second colon."""
    first = pattern.find(":")
    second = pattern.find(":", first + 1) if first >= 0 else -1
    if second < 0:
        return pattern, ""
    return pattern[: second + 1], pattern[second + 1 :]


def _translate(text: str, *, star: str, any_char: str) -> str:
    out = []
    i = 0
    while i < len(text):
        if text.startswith("**", i):
            out.append(".*")
            i += 2
        elif text[i] == "*":
            out.append(star)
            i += 1
        elif text[i] == "?":
            out.append(any_char)
            i += 1
        else:
            out.append(re.escape(text[i]))
            i += 1
    return "".join(out)


def matches(pattern: str, key: str, prefixes: tuple[str, ...] = DEFAULT_SHELL_PREFIXES) -> bool:
    return compile_pattern(pattern, prefixes).match(key) is not None


def specificity(pattern: str) -> int:
    """How many literal characters a pattern has: the more, the more specific."""
    return len(pattern.replace("*", "").replace("?", ""))


def is_exact(pattern: str) -> bool:
    return "*" not in pattern and "?" not in pattern
