"""Shared fixtures: fake plugin sites, the test plugin (a real entry point on the path), co chat in a pty."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixture_plugin"


@pytest.fixture(autouse=True)
def _session_stores_closed() -> Iterator[None]:
    """What helpers.session_with opened is closed after the test."""
    yield
    from helpers import close_stores

    close_stores()


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


CO = str(Path(sys.executable).parent / "co")
PROMPT = "co>"


@pytest.fixture
def chat(testplug: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator:
    """Start ``co chat`` in a real pty with a scripted model; yields a function that spawns it."""
    import pexpect

    monkeypatch.setenv("CO_TEST_CLOSED", str(tmp_path / "closed"))
    children: list[pexpect.spawn] = []

    def spawn(*args: str, cwd: Path | None = None) -> pexpect.spawn:
        child = pexpect.spawn(
            CO,
            ["chat", "-m", "function:co_scripts:chat", *args],
            env=dict(os.environ),
            cwd=str(cwd or tmp_path),
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 120),
        )
        children.append(child)
        child.expect(PROMPT)
        return child

    yield spawn
    for child in children:
        if child.isalive():
            child.terminate(force=True)
