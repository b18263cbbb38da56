"""Helpers for testing Co and Co plugins (also a pytest plugin: ``-p co_core.testing``).

Fixtures give each test private config, data and cache directories, so nothing touches
the developer's real settings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from co_core.app import App, load_app
from co_core.deps import CoDeps


@pytest.fixture
def co_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Private XDG dirs for Co under ``tmp_path``; returns the config dir."""
    for kind in ("config", "data", "cache"):
        folder = tmp_path / f"co-{kind}"
        folder.mkdir()
        monkeypatch.setenv(f"CO_{kind.upper()}_DIR", str(folder))
    yield tmp_path / "co-config"


def write_settings(values: dict[str, Any], config_dir: Path) -> Path:
    """Write ``settings.json`` (nested sections as dicts) into a config dir."""
    path = config_dir / "settings.json"
    path.write_text(json.dumps(values), encoding="utf-8")
    path.chmod(0o600)
    return path


def make_app(settings: dict[str, Any] | None = None, *, cwd: Path | None = None) -> App:
    """An App over the installed plugins, with ``settings`` written to the current CO_CONFIG_DIR."""
    if settings is not None:
        from co_core import paths

        paths.ensure(paths.config_dir())
        write_settings(settings, paths.config_dir())
    return load_app(cwd)


def make_deps(settings: dict[str, Any] | None = None, *, workspace: Path | None = None) -> CoDeps:
    """Deps as a tool sees them in a real run (call inside a test using ``co_dirs``)."""
    return make_app(settings, cwd=workspace).make_deps(workspace)
