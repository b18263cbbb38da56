"""Helpers for testing Co and Co plugins (also a pytest plugin: ``-p co_core.testing``).

Fixtures give each test private config, data and cache directories, so nothing touches
the developer's real settings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
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


def run_co(
    *args: str,
    env: dict[str, str] | None = None,
    input: str | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``co ARGS`` in a subprocess, as a user would, inheriting the test's environment."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "co_core", *args],
        env=full_env,
        input=input,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def install_fake_plugin(
    site: Path, name: str, source: str, *, version: str = "1.0.0", module: str | None = None
) -> Path:
    """Make ``site`` hold a plugin distribution ``co-NAME`` whose hook module is ``source``.

    Put ``site`` on PYTHONPATH and Co discovers it through the real entry-point machinery,
    exactly like a ``pip install``-ed plugin.
    """
    module = module or f"co_fake_{name.replace('-', '_')}"
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    dist = site / f"co_{name.replace('-', '_')}-{version}.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: co-{name}\nVersion: {version}\n", encoding="utf-8"
    )
    (dist / "entry_points.txt").write_text(f"[co]\n{name} = {module}\n", encoding="utf-8")
    return site
