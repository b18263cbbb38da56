"""Every hookspec is documented (signature, parameters, example) and tested.

Adding a hook to co_core/hookspecs.py without a docs/plugins.md section and a
``test_hook_<name>`` test in tests/test_hooks.py fails here.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from co_core.kernel import hookspecs

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
TESTS = ast.parse((ROOT / "tests" / "test_hooks.py").read_text(encoding="utf-8"))
SPECS = sorted(
    name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if hasattr(fn, "co_spec")
)


def doc_section(name: str) -> str:
    match = re.search(rf"^### `{name}\((.*?)^(?=### |## |\Z)", DOCS, re.S | re.M)
    return match.group(0) if match else ""


def test_there_are_hookspecs() -> None:
    assert len(SPECS) >= 8


@pytest.mark.parametrize("name", SPECS)
def test_hookspec_has_docstring(name: str) -> None:
    assert inspect.getdoc(getattr(hookspecs, name)), f"hookspec {name} has no docstring"


@pytest.mark.parametrize("name", SPECS)
def test_hookspec_is_documented(name: str) -> None:
    section = doc_section(name)
    assert section, f"docs/plugins.md has no '### `{name}(...)`' section"
    params = list(inspect.signature(getattr(hookspecs, name)).parameters)
    for param in params:
        described = re.search(rf"^- `{param}[`(]", section, re.M)
        assert described, f"docs for {name} do not describe parameter {param}"
    assert "```python" in section and f"def {name}(" in section, f"docs for {name} have no example"


@pytest.mark.parametrize("name", SPECS)
def test_hookspec_is_tested(name: str) -> None:
    tests = {node.name for node in ast.walk(TESTS) if isinstance(node, ast.FunctionDef)}
    assert f"test_hook_{name}" in tests, f"tests/test_hooks.py has no test_hook_{name}"
