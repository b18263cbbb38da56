from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on PYTHONPATH for fake plugin distributions (see install_fake_plugin)."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(folder))
    return folder
