"""Shared fixtures: the test plugin (a real entry point on the path) and scripted models."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixture_plugin"


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
