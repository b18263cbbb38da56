"""The folder tree is the architecture: each layer imports only the layers it declares,
and nothing cycles.

ARCHITECTURE.md draws the layers, with what each may import, in a table; these tests
keep the code and the table in step (layers that may not import each other, such as
``undo`` and ``policy``, are independent, and the table says so). Every import counts,
also those inside functions (they still make a cycle, only later), except imports under
``if TYPE_CHECKING:``, which never run.
"""

from __future__ import annotations

import re
from pathlib import Path

from co_core.testing import module_imports

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "co_core"
# Each layer and the layers it may import (besides its own modules), lowest first.
MAY_IMPORT: dict[str, set[str]] = {
    "kernel": set(),
    "undo": {"kernel"},
    "telemetry": {"kernel"},
    "sessions": {"kernel"},
    "policy": {"kernel"},
    "agent": {"kernel", "telemetry", "sessions", "policy"},
    "steering": {"kernel", "agent"},
    "mcp": {"kernel", "telemetry", "policy", "agent"},
    "ui": {"kernel", "telemetry", "sessions", "policy", "agent"},
    "cli": {"kernel", "undo", "telemetry", "sessions", "policy", "agent", "mcp", "ui"},
}
LAYERS = list(MAY_IMPORT)
ENGINE = LAYERS[: LAYERS.index("ui")]
TOP = {"co_core", "co_core.__main__", "co_core.testing"}  # may import any layer


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def graph() -> dict[str, set[str]]:
    """Each co_core module and the co_core modules it imports (at run time)."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for _line, target in module_imports(path, package=name):
            while target and target not in modules:
                target = target.rpartition(".")[0]  # `from pkg import name` reaches pkg
            if target and target != name:
                found.add(target)
        edges[name] = found
    return edges


def layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_module_imports_another_in_a_cycle() -> None:
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_layers_import_only_the_layers_they_declare() -> None:
    wrong = []
    for module, targets in sorted(graph().items()):
        if module in TOP:
            continue
        own = layer(module)
        assert own is not None, f"{module} is in no layer: put it in one of {LAYERS}"
        for target in sorted(targets):
            there = layer(target)
            if target in TOP or there is None or (there != own and there not in MAY_IMPORT[own]):
                wrong.append(f"{module} ({own}) imports {target} ({there or 'top'})")
    assert wrong == []


def test_the_declared_layers_form_no_cycle_and_list_lower_layers_first() -> None:
    for position, (name, allowed) in enumerate(MAY_IMPORT.items()):
        assert allowed <= set(LAYERS[:position]), f"{name} may import a layer listed after it"


def test_architecture_md_declares_what_each_layer_may_import() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    declared: dict[str, set[str]] = {}
    for row in re.findall(r"^\| `co_core/(\w+)/` \| ([^|]*) \|", text, re.MULTILINE):
        name, imports = row
        declared[name] = set(re.findall(r"`(\w+)`", imports))
    assert declared == MAY_IMPORT


def test_engine_layers_never_import_the_terminal() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, targets in graph().items()
        if layer(module) in ENGINE
        for target in targets
        if layer(target) in ("ui", "cli")
    ]
    assert wrong == []


def test_the_checks_catch_a_cycle_and_an_undeclared_import() -> None:
    edges = {"co_core.kernel.a": {"co_core.policy.b"}, "co_core.policy.b": {"co_core.kernel.a"}}
    assert find_cycle(edges) == ["co_core.kernel.a", "co_core.policy.b", "co_core.kernel.a"]
    assert layer("co_core.policy.b") == "policy" and layer("co_core.ui.repl") == "ui"


def test_function_level_and_relative_imports_count(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import co_core.kernel.paths\n"
        "from . import sibling\n"
        "if TYPE_CHECKING:\n"
        "    from co_core.ui import repl\n"
        "def later():\n"
        "    from co_core.cli.main import app\n"
    )
    found = [target for _, target in module_imports(source, package="co_core.agent.mod")]
    found = [target for target in found if target.startswith("co_core")]
    assert found == ["co_core.kernel.paths", "co_core.agent.sibling", "co_core.cli.main.app"]


def test_architecture_md_names_only_modules_that_exist() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(co_core(?:/[\w]+)+\.py|co_core(?:/[\w]+)+/)`", text))
    assert len(named) >= 20, "ARCHITECTURE.md should walk through the modules it names"
    missing = sorted(n for n in named if not (ROOT / n).exists())
    assert missing == []
    for name in LAYERS:
        assert f"`co_core/{name}/`" in text, f"ARCHITECTURE.md does not describe the {name} layer"
