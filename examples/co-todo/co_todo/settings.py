"""The ``todo`` settings section."""

from __future__ import annotations

from pathlib import Path

from co_core import SectionModel, setting


class TodoSettings(SectionModel):
    file: Path | None = setting(None, help="where todos are kept (default: <data dir>/todo.json)")
    page_size: int = setting(20, ge=1, le=200, help="todos shown per page")
