"""co-obsidian's resource key: the index of the configured vault."""

from __future__ import annotations

from typing import TYPE_CHECKING

from co_core import ResourceKey

if TYPE_CHECKING:
    from co_obsidian.resource import ObsidianIndex

VAULT: ResourceKey[ObsidianIndex] = ResourceKey("obsidian.index")
