"""Where Co keeps its files (XDG via platformdirs; env vars override for tests and users)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from co_core.kernel.errors import CoError

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


# Co's own folders: what each is called in a message, and the variable that moves it
FOLDERS = {
    "config": ("settings directory", "CO_CONFIG_DIR", config_dir),
    "data": ("data directory", "CO_DATA_DIR", data_dir),
    "cache": ("cache directory", "CO_CACHE_DIR", cache_dir),
}
UNWRITABLE = {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT}


class NotWritable(CoError):
    """One of Co's own folders cannot be written (a read-only home, a full disk)."""


def not_writable(kind: str, error: OSError) -> NotWritable:
    """The one line for Co's ``kind`` folder (config, data, cache) being unwritable."""
    label, env, where = FOLDERS[kind]
    reason = error.strerror or str(error)
    return NotWritable(
        f"{label} {where()} is not writable ({reason}): make it writable, or point {env} "
        "at a folder that is"
    )


def writable(kind: str) -> NotWritable | None:
    """None when Co can write into its ``kind`` folder (made if missing), else why not."""
    import tempfile

    try:
        folder = ensure_dir(FOLDERS[kind][2]())
        with tempfile.NamedTemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return not_writable(kind, exc)
    return None


def unwritable(exc: BaseException) -> NotWritable | None:
    """The one line for an error that is one of Co's folders being unwritable, else None.

    It is, when it (or what caused it) is an OSError such as EROFS or EACCES about a path
    in one of those folders, or on the way to one (``~/.config`` when the settings
    directory is ``~/.config/co``)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in UNWRITABLE and current.filename:
            where = Path(os.path.abspath(os.fsdecode(current.filename)))
            for kind, (_label, _env, folder) in FOLDERS.items():
                mine = Path(os.path.abspath(folder()))
                if where == mine or where in mine.parents or mine in where.parents:
                    return not_writable(kind, current)
        current = current.__cause__ or current.__context__
    return None


def ensure_dir(path: Path, mode: int = 0o700) -> Path:
    """Create a private directory if missing and return it."""
    path.mkdir(parents=True, exist_ok=True, mode=mode)
    return path


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, atomically (a crash leaves the old file)."""
    ensure_dir(path.parent)
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


class SymlinkInPath(OSError):
    """A folder on the way is a symlink (or not a folder): refused, never followed."""

    def __init__(self, walked: Path) -> None:
        super().__init__(f"{walked} is a symlink or not a folder")
        self.walked = walked


def open_dir_nofollow(root: Path, parts: tuple[str, ...], *, create: bool = False) -> int:
    """An fd for ``root/parts`` opened one folder at a time with O_NOFOLLOW.

    Checking a path and then using it leaves a window in which a folder can be swapped for
    a symlink; walking with ``dir_fd`` closes it. Missing folders are made if ``create``.
    The caller closes the fd.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    walked = Path(root)
    try:
        for part in parts:
            walked = walked / part
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
            try:
                next_fd = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o755, dir_fd=fd)
                next_fd = os.open(part, flags, dir_fd=fd)
            except OSError as exc:
                raise SymlinkInPath(walked) from exc
            os.close(fd)
            fd = next_fd
        return fd
    except BaseException:
        os.close(fd)
        raise
