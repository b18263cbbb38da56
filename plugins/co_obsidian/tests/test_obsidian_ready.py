"""The vault's tools are offered only once a vault folder is set (``plugin_ready``)."""

from __future__ import annotations

from pathlib import Path

import co_obsidian.plugin
import pytest

from co_core.testing import status_rows, use_plugin


@pytest.fixture(autouse=True)
def _no_vault_from_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OBSIDIAN_VAULT_PATH", raising=False)
    monkeypatch.delenv("CO_OBSIDIAN_VAULT_PATH", raising=False)


def row(settings: dict) -> object:
    with use_plugin(co_obsidian.plugin, name="obsidian", settings=settings) as app:
        return status_rows(app)["obsidian tools"]


def test_no_vault_set_says_the_command(co_dirs: Path) -> None:
    found = row({})
    assert found.state == "off"
    assert "run `co config set obsidian.vault_path ~/Notes`" in found.detail


def test_a_vault_that_is_not_a_folder_is_not_ready(co_dirs: Path, tmp_path: Path) -> None:
    found = row({"obsidian": {"vault_path": str(tmp_path / "gone")}})
    assert found.state == "off"
    assert "is not a folder" in found.detail


def test_a_vault_folder_makes_the_tools_offered(co_dirs: Path, tmp_path: Path) -> None:
    (tmp_path / "vault").mkdir()
    found = row({"obsidian": {"vault_path": str(tmp_path / "vault")}})
    assert (found.state, found.detail) == ("ok", "offered (6 tools)")
