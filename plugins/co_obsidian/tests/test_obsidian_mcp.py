"""The vault's tools through ``co mcp serve``, driven by the ``mcp`` SDK's own client: a
name holding a NUL or another control character is a tool error another assistant can
read and act on, never a JSON-RPC internal error."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from obsidian_vaults import write


def _call_all(co_dirs: Path, vault: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "co_core", "mcp", "serve"],
        env={
            **os.environ,
            "CO_LOAD_PLUGINS": "obsidian",
            "OBSIDIAN_VAULT_PATH": str(vault),
            **{
                f"CO_{k.upper()}_DIR": str(co_dirs.parent / f"co-{k}")
                for k in ("config", "data", "cache")
            },
        },
        cwd=str(vault.parent),
    )

    async def main() -> list[Any]:
        async with Client(params) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(main)


def _text(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def test_control_characters_are_tool_errors_over_mcp(co_dirs: Path, vault: Path) -> None:
    write(vault, "Home.md", "# Home\n## Plans\nThe plans.")
    read_nul, read_bell, links_nul, folder_nul, part = _call_all(
        co_dirs,
        vault,
        [
            ("read_note", {"name": "Home\x00"}),
            ("read_note", {"name": "Ho\x07me"}),
            ("note_links", {"name": "a\x00b"}),
            ("list_notes", {"folder": "x\x00y"}),
            ("read_note", {"name": "Home#Plans"}),
        ],
    )
    for result in (read_nul, read_bell, links_nul, folder_nul):
        assert result.is_error
        assert "control character" in _text(result) and "Traceback" not in _text(result)
    assert not part.is_error and _text(part).endswith("## Plans\nThe plans.\n")
