"""Temporary vaults with real files, and tools called with a real RunContext."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from co_core.testing import make_deps


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    return root


@pytest.fixture
def make_ctx(co_dirs: Path) -> Callable[..., Any]:
    """``make_ctx(vault, **obsidian_settings)`` -> a RunContext whose deps are Co's real deps."""
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    made = []

    def make(root: Path | None, **section: Any) -> Any:
        settings = {"obsidian": {**({"vault_path": str(root)} if root else {}), **section}}
        deps = make_deps(settings, workspace=root.parent if root else None)
        made.append(deps)
        return RunContext(deps=deps, model=TestModel(), usage=RunUsage())

    yield make
    for deps in made:
        deps.close()


@pytest.fixture
def ctx(vault: Path, make_ctx: Callable[..., Any]) -> Any:
    return make_ctx(vault)
