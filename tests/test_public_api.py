"""The bundled plugins import only co_core's public modules (co_core.public.PUBLIC_MODULES)."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import co_core
from co_core.public import PUBLIC_MODULES, check_imports
from co_core.testing import private_imports

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ["co_shell", "co_obsidian", "co_google", "co_slack"]


def test_bundled_plugins_import_only_public_modules() -> None:
    problems = []
    for name in BUNDLED:
        folder = ROOT / "plugins" / name
        assert folder.is_dir(), f"plugins/{name} is missing"
        problems += private_imports(folder)  # the package and its tests
    assert problems == []


def test_public_modules_exist() -> None:
    modules = {"co_core"} | {f"co_core.{m.name}" for m in pkgutil.iter_modules(co_core.__path__)}
    assert set(PUBLIC_MODULES) <= modules


def test_a_private_import_is_caught_in_every_spelling(tmp_path: Path) -> None:
    plugin = tmp_path / "co_bad" / "plugin.py"
    plugin.parent.mkdir()
    plugin.write_text(
        "import co_core.plugins\n"
        "from co_core.app import load_app\n"
        "from co_core import agent, hookimpl\n"
        "from co_core.policy.engine import PolicyEngine\n"
        "import co_core.results, os\n"
        "from co_core.settings import setting\n"
        "def later():\n"
        "    from co_core.audit import read_entries\n"
    )
    assert check_imports([plugin]) == [
        f"{plugin}:1: imports private module co_core.plugins",
        f"{plugin}:2: imports private module co_core.app",
        f"{plugin}:3: imports private module co_core.agent",
        f"{plugin}:4: imports private module co_core.policy.engine",
        f"{plugin}:8: imports private module co_core.audit",
    ]
