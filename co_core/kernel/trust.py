"""Which project folders the user trusts to configure Co (``co trust``).

A project's ``.co/`` folder can change settings, rules and MCP servers, so a cloned
repository must not get that power by itself: only folders listed here count.
"""

from __future__ import annotations

import json
from pathlib import Path

from co_core.kernel.paths import config_dir, write_private


def _file() -> Path:
    return config_dir() / "trusted.json"


def trusted_folders() -> list[Path]:
    try:
        data = json.loads(_file().read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return []
    return [Path(p) for p in data.get("folders", []) if isinstance(p, str)]


def _save(folders: list[Path]) -> None:
    unique = sorted({str(f) for f in folders})
    write_private(_file(), json.dumps({"folders": unique}, indent=2) + "\n")


def trust(folder: Path) -> Path:
    folder = folder.resolve()
    _save([*trusted_folders(), folder])
    return folder


def untrust(folder: Path) -> bool:
    folder = folder.resolve()
    folders = trusted_folders()
    if folder not in folders:
        return False
    _save([f for f in folders if f != folder])
    return True


def project_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above ``start`` holding a ``.co`` directory."""
    here = (start or Path.cwd()).resolve()
    home = Path.home().resolve()
    for folder in (here, *here.parents):
        if folder != home and (folder / ".co").is_dir():
            return folder
    return None


def is_trusted(folder: Path) -> bool:
    return folder.resolve() in trusted_folders()
