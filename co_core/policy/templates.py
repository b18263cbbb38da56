"""Read a permission key back into the tool and arguments that would produce it.

``co policy explain shell:exec:git push`` has no tool call to look at; matching the key
against every tool's template finds the tool (its risk, its plugin) and the arguments
(``{"cmd": "git push"}``) that plugin opinions and shell splitting need.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable

from co_core.kernel.tools import ToolSpec
from co_core.kernel.visible import key_value


def template_regex(template: str) -> tuple[re.Pattern[str], int]:
    """The regex of a template (one named group per field) and its count of literal characters."""
    regex, literal, used = "", 0, set()
    for text, name, _, _ in string.Formatter().parse(template):
        regex += re.escape(text)
        literal += len(text)
        if name is not None:
            if name.isidentifier() and name not in used:
                regex += f"(?P<{name}>.*)"
                used.add(name)
            else:
                regex += ".*"
    return re.compile(regex, re.DOTALL), literal


def tool_for_key(specs: Iterable[ToolSpec], key: str) -> tuple[ToolSpec, dict[str, str]] | None:
    """The most specific tool whose template matches ``key``, with the implied arguments
    (as they are: a key's escapes read back)."""
    best: tuple[ToolSpec, dict[str, str]] | None = None
    best_literal = -1
    for spec in specs:
        regex, literal = template_regex(spec.permission)
        found = regex.fullmatch(key)
        if found and literal > best_literal:
            args = {name: key_value(text) for name, text in found.groupdict().items()}
            best, best_literal = (spec, args), literal
    return best
