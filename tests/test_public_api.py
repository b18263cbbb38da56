"""Plugins see one namespace: ``co_core`` (and ``co_core.testing`` for their tests)."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import co_core
from co_core.testing import module_imports, private_imports

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ["co_shell", "co_obsidian", "co_google", "co_slack"]


def test_bundled_plugins_import_only_the_public_api() -> None:
    problems = []
    for name in BUNDLED:
        folder = ROOT / "plugins" / name
        assert folder.is_dir(), f"plugins/{name} is missing"
        problems += private_imports(folder)  # the package and its tests
    assert problems == []


def test_bundled_plugins_name_cos_contract_not_pydantic_ai() -> None:
    """Tools take ``co_core.ToolContext`` and raise ``co_core.ModelRetry``: a plugin depends
    on Co's contract alone, whatever pydantic-ai renames (its range is co-core's business)."""
    found = [
        f"{path.relative_to(ROOT)}:{line}: {target}"
        for name in BUNDLED
        for path in sorted((ROOT / "plugins" / name / name).rglob("*.py"))
        for line, target in module_imports(path)
        if target.split(".")[0] == "pydantic_ai"
    ]
    assert found == []


def test_every_public_name_resolves_and_is_listed() -> None:
    source = (ROOT / "co_core" / "__init__.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    checking = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
    )
    typed = {alias.name for node in checking.body for alias in node.names}  # type: ignore[attr-defined]
    assert typed == set(co_core.__all__)  # what type checkers see is what exists
    for name in co_core.__all__:
        assert getattr(co_core, name) is not None


def test_importing_co_core_loads_nothing_heavy() -> None:
    probe = "import sys, co_core; print(sorted(m for m in ('pydantic', 'pydantic_ai', 'rich') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def test_packages_ship_type_information() -> None:
    for package in ["co_core", *BUNDLED]:
        module = importlib.import_module(package)
        assert (Path(module.__file__).parent / "py.typed").is_file(), f"{package} has no py.typed"


def test_a_private_import_is_caught_in_every_spelling(tmp_path: Path) -> None:
    plugin = tmp_path / "co_bad" / "plugin.py"
    plugin.parent.mkdir()
    plugin.write_text(
        "import co_core.kernel.host\n"
        "from co_core.kernel.app import load_app\n"
        "from co_core import agent, hookimpl\n"
        "from co_core.policy.engine import PolicyEngine\n"
        "import co_core, os\n"
        "from co_core.testing import make_app\n"
        "def later():\n"
        "    from co_core.policy.audit import read_entries\n"
    )
    assert private_imports(tmp_path) == [
        f"{plugin}:1: imports private module co_core.kernel.host",
        f"{plugin}:2: imports private module co_core.kernel.app.load_app",
        f"{plugin}:3: imports private module co_core.agent",
        f"{plugin}:4: imports private module co_core.policy.engine.PolicyEngine",
        f"{plugin}:8: imports private module co_core.policy.audit.read_entries",
    ]
