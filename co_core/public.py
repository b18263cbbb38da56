"""Which ``co_core`` modules are Co's public API for plugins (defined once, checked by tests).

Everything else in ``co_core`` (the plugin host, the agent, the REPL, policy internals)
may change in any release. Plugins import only these; ``check_imports`` finds the lines
that do not, so a plugin's own test suite can enforce it (``co_core.testing`` uses it).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

PUBLIC_MODULES: tuple[str, ...] = (
    "co_core",
    "co_core.changes",
    "co_core.deps",
    "co_core.errors",
    "co_core.hookspecs",
    "co_core.paths",
    "co_core.results",
    "co_core.settings",
    "co_core.snapshots",
    "co_core.status",
    "co_core.telemetry",
    "co_core.testing",
    "co_core.tools",
)


def is_public(module: str) -> bool:
    """True for a public module, and for anything outside co_core."""
    if module != "co_core" and not module.startswith("co_core."):
        return True
    return module in PUBLIC_MODULES


def _imported(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            if node.module == "co_core":  # `from co_core import agent` reaches past __all__
                for alias in node.names:
                    if alias.name not in _exported():
                        yield node.lineno, f"co_core.{alias.name}"


def _exported() -> set[str]:
    import co_core

    return set(co_core.__all__)


def check_imports(files: Iterable[Path]) -> list[str]:
    """``"path:line: imports private module co_core.x"`` for every offending import."""
    problems = []
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        except (OSError, SyntaxError, ValueError) as exc:
            problems.append(f"{path}: cannot be read: {exc}")
            continue
        for line, module in sorted(_imported(tree)):
            if not is_public(module):
                problems.append(f"{path}:{line}: imports private module {module}")
    return problems
