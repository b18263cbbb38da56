"""The ``obsidian.index`` resource: the index of the configured vault, opened on first use.

Building the resource never fails (Co may start without a vault); asking it for the
index raises VaultError naming the setting when the vault is missing.
"""

from __future__ import annotations

import threading
from typing import Any

from co_obsidian.index import VaultIndex
from co_obsidian.settings import ObsidianSettings
from co_obsidian.vault import vault_root


class ObsidianIndex:
    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self._indexes: dict[str, VaultIndex] = {}
        self._lock = threading.Lock()

    def index(self) -> VaultIndex:
        root = vault_root(self.settings)
        with self._lock:
            found = self._indexes.get(str(root))
            if found is None:
                recheck = self.settings.section(ObsidianSettings).recheck_seconds
                found = self._indexes[str(root)] = VaultIndex(root, recheck_seconds=recheck)
            return found

    def close(self) -> None:
        for index in self._indexes.values():
            index.close()
        self._indexes.clear()


def make_index(settings: Any) -> ObsidianIndex:
    return ObsidianIndex(settings)
