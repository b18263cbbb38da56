"""Put paths back the way the change record saw them, never following a symlink.

Every directory on the way is opened with ``O_NOFOLLOW`` from ``/`` (recorded paths have
their parents resolved), files are written to a temporary name in the same directory and
renamed over the target, so a symlink planted at the target is replaced, not written
through, and a symlink planted in a parent directory stops the restore of that path.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from co_core.kernel.paths import SymlinkInPath, open_dir_nofollow
from co_core.undo.state import ABSENT, DIR, FILE, SYMLINK, UNKNOWN, State


class RestoreRefused(Exception):
    """This one path cannot be restored safely; the message says why."""


def _open_dir(path: Path, create: bool) -> int:
    try:
        return open_dir_nofollow(Path("/"), path.parts[1:], create=create)
    except SymlinkInPath as exc:
        raise RestoreRefused(f"{exc.walked} is now a symlink or not a folder") from exc


def _kind_at(fd: int, name: str) -> str:
    import stat

    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return ABSENT
    if stat.S_ISDIR(info.st_mode):
        return DIR
    if stat.S_ISLNK(info.st_mode):
        return SYMLINK
    return FILE


def restore_path(path: Path, state: State) -> None:
    """Make ``path`` look like ``state``; raises RestoreRefused when that is not safe."""
    if state.kind == UNKNOWN:
        raise RestoreRefused(f"{path}: its previous content was not kept (too big or unreadable)")
    try:
        fd = _open_dir(path.parent, create=state.kind != ABSENT)
    except FileNotFoundError:
        return  # parent gone and the path should be absent: nothing to do
    try:
        name, now = path.name, _kind_at(fd, path.name)
        if state.kind == ABSENT:
            if now == DIR:
                try:
                    os.rmdir(name, dir_fd=fd)
                except OSError as exc:
                    raise RestoreRefused(f"{path}: folder is not empty, left in place") from exc
            elif now != ABSENT:
                os.unlink(name, dir_fd=fd)
            return
        if state.kind == DIR:
            if now == DIR:
                return
            if now != ABSENT:
                os.unlink(name, dir_fd=fd)
            os.mkdir(name, state.mode or 0o755, dir_fd=fd)
            return
        if now == DIR:
            raise RestoreRefused(f"{path}: is now a folder, left in place")
        tmp = f".{name}.co-undo-{secrets.token_hex(4)}"
        if state.kind == SYMLINK:
            os.symlink(os.fsdecode(state.data or b""), tmp, dir_fd=fd)
        else:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            wfd = os.open(tmp, flags, state.mode or 0o644, dir_fd=fd)
            with os.fdopen(wfd, "wb") as handle:
                handle.write(state.data or b"")
        os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        os.close(fd)
