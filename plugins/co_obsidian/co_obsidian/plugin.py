"""co-obsidian's hooks: search and read an Obsidian vault."""

from __future__ import annotations

from typing import Any

from co_core import hookimpl


@hookimpl
def register_settings(register: Any) -> None:
    from co_obsidian.settings import ObsidianSettings

    register("obsidian", ObsidianSettings)
