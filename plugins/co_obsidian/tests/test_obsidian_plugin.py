"""The plugin as Co sees it: registered tools, the resource, the status check, light import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from co_obsidian.keys import VAULT
from obsidian_vaults import write

from co_core.testing import make_app, status_rows


def test_tools_are_registered_with_risks_and_permission_keys(co_dirs: Path) -> None:
    specs = {s.name: s for s in make_app({}).host.tools() if s.plugin == "obsidian"}
    assert {n: s.risk for n, s in specs.items()} == {
        "search_notes": "read",
        "list_notes": "read",
        "read_note": "read",
        "note_links": "read",
        "create_note": "write",
        "append_to_note": "write",
    }
    assert specs["read_note"].permission_key({"name": "Plan"}) == "obsidian:read:Plan"
    assert specs["create_note"].permission_key({"name": "a/b"}) == "obsidian:write:a/b"
    assert all(isinstance(s.target, str) for s in specs.values())


def _row(app):
    return status_rows(app)["obsidian vault"]


def test_status_check(co_dirs: Path, tmp_path: Path) -> None:
    assert _row(make_app({})).state == "off"
    missing = _row(make_app({"obsidian": {"vault_path": str(tmp_path / "none")}}))
    assert missing.state == "fail" and "obsidian.vault_path" in missing.detail
    vault = tmp_path / "v"
    for i in range(3):
        write(vault, f"n{i}.md", "x")
    write(vault, ".obsidian/x.md", "x")
    row = _row(make_app({"obsidian": {"vault_path": str(vault)}}))
    assert row.state == "ok" and "(3 notes)" in row.detail


def test_hook_module_imports_nothing_heavy() -> None:
    code = (
        "import sys, co_obsidian.plugin as p; from co_core.kernel.app import load_app; "
        "app = load_app(); app.host.tools(); app.host.named('register_deps', 'r'); "
        "heavy = [m for m in ('pydantic_ai', 'yaml', 'co_obsidian.tools', 'co_obsidian.index', 'rich.progress') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_index_resource_builds_without_a_vault_and_closes(co_dirs: Path) -> None:
    deps = make_app({}).make_deps()
    holder = deps.resource(VAULT)
    assert deps.resources.built() == ["obsidian.index"]
    assert deps.close() == []
    assert holder is not None
