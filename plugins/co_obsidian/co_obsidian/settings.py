"""co-obsidian settings (section ``obsidian``)."""

from __future__ import annotations

from co_core import SectionModel, setting


class ObsidianSettings(SectionModel):
    vault_path: str | None = setting(
        None, env="OBSIDIAN_VAULT_PATH", help="folder of the Obsidian vault"
    )
    recheck_seconds: float = setting(
        2.0,
        env="OBSIDIAN_RECHECK_SECONDS",
        ge=0,
        help="how often searches stat every note for edits where inotify is unavailable "
        "(creates, renames and deletes are noticed at once; 0: before every search)",
    )
