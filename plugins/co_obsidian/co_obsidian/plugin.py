"""co-obsidian's hooks: search and read an Obsidian vault.

Only names are registered here; the tools, the index and PyYAML load when the agent
first needs them, so ``co --help`` and ``co status`` stay light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from co_core import hookimpl
from co_obsidian.keys import VAULT

if TYPE_CHECKING:
    from co_core import (
        ResourceRegister,
        Role,
        Settings,
        SettingsRegister,
        StatusCheckRegister,
        ToolRegister,
    )

_TOOLS = "co_obsidian.tools"


@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_obsidian.settings import ObsidianSettings

    register("obsidian", ObsidianSettings)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(
        f"{_TOOLS}:search_notes",
        risk="read",
        permission="obsidian:search:{query}",
        does="searches",
        roles={"query": "query"},
    )
    register(
        f"{_TOOLS}:list_notes",
        risk="read",
        permission="obsidian:list:{folder}",
        does="lists",
        roles={"folder": "target", "tag": "query"},
    )
    # Keys name the note a call touches (its resolved vault path), however it was typed.
    read, targets = "obsidian:read:{name}", "co_obsidian.targets"
    note: dict[str, Role] = {"name": "target"}
    register(
        f"{_TOOLS}:read_note",
        risk="read",
        permission=read,
        resolve=f"{targets}:reading",
        does="reads",
        roles=note,
    )
    register(  # what it gives is a list: the note's links, and the notes linking to it
        f"{_TOOLS}:note_links",
        risk="read",
        permission=read,
        resolve=f"{targets}:reading",
        does="lists",
        roles=note,
    )
    written: dict[str, Role] = {"name": "target", "content": "text"}
    register(
        f"{_TOOLS}:create_note",
        risk="write",
        permission="obsidian:write:{name}",
        resolve=f"{targets}:creating",
        does="writes",
        roles=written,
    )
    register(
        f"{_TOOLS}:append_to_note",
        risk="write",
        permission="obsidian:write:{name}",
        resolve=f"{targets}:appending",
        does="writes",
        roles=written,
    )


def _make_index(settings: Any) -> Any:
    from co_obsidian.resource import make_index

    return make_index(settings)


def _vault_check(settings: Any) -> Any:
    from co_obsidian.checks import vault_check

    return vault_check(settings)


@hookimpl
def register_deps(register: ResourceRegister) -> None:
    register(VAULT, _make_index)


@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    register("obsidian vault", _vault_check, timeout=3)


@hookimpl
def plugin_ready(settings: Settings) -> str | None:
    from pathlib import Path

    from co_obsidian.settings import ObsidianSettings

    raw = settings.section(ObsidianSettings).vault_path
    fix = "`co config set obsidian.vault_path ~/Notes` (your vault's folder)"
    if not raw:
        return f"no Obsidian vault is set: run {fix}"
    if not Path(raw).expanduser().is_dir():
        return f"the Obsidian vault {raw} is not a folder: run {fix}"
    return None
