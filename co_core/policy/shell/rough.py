"""The parts of a command whose meaning is not fixed, found with tree-sitter-bash.

Such a command is always asked about; its parts only serve to let a deny rule hold
anywhere inside it (``ls $(rm -rf ~)`` with ``shell:exec:rm *`` denied is denied, not
asked) and to show what it contains. tree-sitter-bash reads all of bash (loops,
``case``, arithmetic, substitutions), so the search reaches everywhere; where it cannot
tell, the part is the text as written.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from co_core.policy.shell.syntax import NotLiteral

if TYPE_CHECKING:
    from co_core.policy.shell.parts import Part

EXEC_NODES = {"command", "declaration_command", "unset_command"}
REDIRECT_NODES = {"file_redirect", "heredoc_redirect", "herestring_redirect"}
WRITE_OPS = {">", ">>", "&>", "&>>", ">|", "<>", ">&"}
_SKIPPABLE = re.compile(r"^(-.*|[A-Za-z_][A-Za-z0-9_]*=.*|\d+(\.\d+)?[smhd]?)$")
MAX_DEPTH = 8


@functools.cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def rough_parts(command: str, depth: int = 0) -> list[Part]:
    from co_core.policy.shell.parts import Part

    source = command.encode("utf-8", "surrogatepass")
    tree = _parser().parse(source)
    parts: list[Part] = []

    def text(node: Any) -> str:
        return source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    stack = [tree.root_node]  # a loop, not recursion: nesting depth is the attacker's
    while stack:
        node = stack.pop()
        if node.type in EXEC_NODES:
            words = [c for c in node.named_children if c.type not in REDIRECT_NODES]
            if words:
                parts.append(Part("exec", " ".join(text(w) for w in words)))
                if depth < MAX_DEPTH:
                    parts.extend(_inside(words, text, depth))
        elif node.type == "file_redirect":
            op = next((c.type for c in node.children if not c.is_named), "")
            target = node.child_by_field_name("destination")
            if target is not None and not (op in (">&", "<&") and target.type == "number"):
                parts.append(Part("write" if op in WRITE_OPS else "read", text(target)))
        stack.extend(reversed(node.children))
    return parts


def _inside(words: list[Any], text: Any, depth: int) -> list[Part]:
    """Commands inside this one: what a wrapper, a shell, ``eval`` or ``find -exec`` runs
    (read as Co reads a fixed command where the words allow, else the simple way)."""
    from co_core.policy.shell.inner import inner_commands

    shown = [text(w) for w in words]
    values = tuple(_unquote(s) for s in shown)
    try:
        inners = [(i.start, i.end, i.shell) for i in inner_commands(values)]
    except NotLiteral:
        inners = _simple_inners(values)
    found: list[Part] = []
    for start, end, shell in inners:
        inner = " ".join((values if shell else shown)[start:end])
        found += rough_parts(inner, depth + 1)
    return found


def _simple_inners(values: tuple[str, ...]) -> list[tuple[int, int, str | None]]:
    from co_core.policy.shell.inner import FIND_EXEC, SHELLS, WRAPPERS, base

    name = base(values[0])
    if name in ("eval", "watch"):
        return [(1, len(values), "sh")]
    if name == "trap" and len(values) > 2:
        return [(1, 2, "sh")]
    if name in SHELLS or name in ("zsh", "ksh", "fish"):
        flags = [i for i, v in enumerate(values) if re.fullmatch(r"-\w*c\w*", v)]
        return [(flags[0] + 1, flags[0] + 2, "sh")] if flags else []
    start = 1
    if name == "find":
        found = [i for i, v in enumerate(values) if v in FIND_EXEC]
        if not found:
            return []
        start = found[0] + 1
    elif name not in WRAPPERS:
        return []
    while start < len(values) and _SKIPPABLE.match(values[start]):
        start += 1
    return [(start, len(values), None)] if start < len(values) else []


def _unquote(word: str) -> str:
    """Quotes removed the simple way (what the word says, for finding commands in it)."""
    from co_core.policy.shell import syntax

    try:
        program = syntax.read(word)
        item = program.items[0][0].first.commands[0]
        if isinstance(item, syntax.Simple) and len(item.words) == 1:
            return item.words[0].text
    except (NotLiteral, IndexError):
        pass
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word
