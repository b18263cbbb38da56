"""The todo list on disk: a JSON array of strings, private to the user."""

from __future__ import annotations

import json
from pathlib import Path

from co_core import CoError, data_dir, write_private


class TodoStore:
    def __init__(self, path: Path | None) -> None:
        self.path = path or data_dir() / "todo.json"

    def all(self) -> list[str]:
        if not self.path.exists():
            return []
        try:
            items = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CoError(f"{self.path} is not a todo list: {exc}") from exc
        return [str(item) for item in items]

    def add(self, title: str) -> int:
        items = [*self.all(), title]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_private(self.path, json.dumps(items, indent=1))
        return len(items)

    def close(self) -> None:
        """Nothing to release here; a client or sandbox would close connections."""
