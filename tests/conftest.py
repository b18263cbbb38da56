"""Shared fixtures: fake plugin sites, the test plugin (a real entry point on the path)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixture_plugin"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on PYTHONPATH for fake plugin distributions (see install_fake_plugin)."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(folder))
    return folder


@pytest.fixture
def testplug(co_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make the test plugin installed for this test and for `co` subprocesses it starts."""
    monkeypatch.syspath_prepend(str(FIXTURE))
    tests_dir = str(Path(__file__).parent)
    old = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(p for p in (str(FIXTURE), tests_dir, old) if p)
    )
    monkeypatch.setenv("CO_LOAD_PLUGINS", "testplug")
    return co_dirs
