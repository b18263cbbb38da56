"""Helpers for co-obsidian tests (a uniquely named module: test dirs share sys.path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from co_obsidian.keys import VAULT


def write(root: Path, rel: str, text: str) -> Path:
    """Write a note (folders created) and return its path."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def indexed(ctx: Any) -> Any:
    """The vault's index once it covers the vault: the first search answers as rg does
    and starts the build; tests of the index's own ranking wait for it."""
    index = ctx.deps.resource(VAULT).index()
    index.refresh()
    return index
