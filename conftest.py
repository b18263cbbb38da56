"""Every test in this repository runs with private Co directories: none touches real settings."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_co_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path_factory.mktemp("co-home")
    for kind in ("config", "data", "cache"):
        folder = Path(base, kind)
        folder.mkdir()
        monkeypatch.setenv(f"CO_{kind.upper()}_DIR", str(folder))
    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)
    # pexpect's pty never answers prompt_toolkit's cursor-position request; without this,
    # prompt_toolkit prints a warning 2 s into every `co chat`, in cooked mode, and a Ctrl+D
    # a test sends at that moment is eaten by the tty (a real terminal answers the request).
    monkeypatch.setenv("PROMPT_TOOLKIT_NO_CPR", "1")
