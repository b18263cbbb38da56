"""co-obsidian settings (section ``obsidian``)."""

from __future__ import annotations

from co_core.settings import SectionModel, setting


class ObsidianSettings(SectionModel):
    vault_path: str | None = setting(
        None, env="OBSIDIAN_VAULT_PATH", help="folder of the Obsidian vault"
    )
