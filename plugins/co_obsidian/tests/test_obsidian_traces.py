"""Building the vault index is traced: a ``co.index.build`` span with the note count lands
in the real SQLite trace database."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from co_obsidian.index import VaultIndex
from obsidian_vaults import write

from co_core.testing import make_app, traced


def test_index_build_leaves_a_span_with_the_note_count(co_dirs: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for i in range(7):
        write(vault, f"n{i}.md", f"note {i}")
    db = tmp_path / "traces.db"
    with traced(make_app({"telemetry": {"sqlite_path": str(db)}}).settings):
        index = VaultIndex(vault, tmp_path / "index.sqlite")
        try:
            assert index.refresh()["added"] == 7
        finally:
            index.close()
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT attributes FROM spans WHERE name = 'co.index.build'").fetchall()
    assert [json.loads(r[0])["co.notes"] for r in rows] == [7]
