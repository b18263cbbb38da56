"""Where Co keeps its files (XDG via platformdirs; env vars override for tests and users)."""

from __future__ import annotations

import os
from pathlib import Path

APP = "co"


def _dir(env: str, kind: str) -> Path:
    override = os.environ.get(env)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(getattr(platformdirs, f"user_{kind}_dir")(APP, appauthor=False))


def config_dir() -> Path:
    return _dir("CO_CONFIG_DIR", "config")


def data_dir() -> Path:
    return _dir("CO_DATA_DIR", "data")


def cache_dir() -> Path:
    return _dir("CO_CACHE_DIR", "cache")


def settings_file() -> Path:
    return config_dir() / "settings.json"


def ensure(path: Path, mode: int = 0o700) -> Path:
    """Create a private directory if missing and return it."""
    path.mkdir(parents=True, exist_ok=True, mode=mode)
    return path


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, atomically (a crash leaves the old file)."""
    ensure(path.parent)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
