"""Workspace paths the model gives us, made safe.

A path is resolved with every symlink followed and refused when it ends up outside the
workspace; writes into ``.git/`` and ``.co/`` are refused. Reading and writing then walk
the resolved path again from the workspace with ``O_NOFOLLOW`` at every step, so a
symlink swapped in after the check makes the call fail instead of escaping. Writes go
to a temporary file renamed into place (never through a symlink).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from co_core import SymlinkInPath, open_dir_nofollow

PROTECTED = (".git", ".co")
SANDBOX_ROOT = "/workspace"


class PathRefused(ValueError):
    """The path is outside the workspace or in a protected folder; the message says which."""


def resolve(workspace: Path, path: str, *, write: bool = False) -> Path:
    """The real absolute path for ``path`` (relative to the workspace, or ``/workspace/...``)."""
    if not path or "\0" in path:
        raise PathRefused("give a path relative to the workspace, e.g. 'src/main.py'")
    root = Path(os.path.realpath(workspace))
    if path == SANDBOX_ROOT or path.startswith(SANDBOX_ROOT + "/"):
        path = path[len(SANDBOX_ROOT) :].lstrip("/") or "."
    candidate = Path(path) if os.path.isabs(path) else root / path
    real = Path(os.path.realpath(candidate))
    if real != root and not real.is_relative_to(root):
        raise PathRefused(f"{path!r} is outside the workspace; use a path inside it")
    rel = real.relative_to(root)
    if write:
        if real == root:
            raise PathRefused("cannot write the workspace folder itself; name a file")
        protected = [part for part in rel.parts if part in PROTECTED]
        if protected:  # at any depth: a nested repository's .git is just as precious
            raise PathRefused(f"writing inside {protected[0]}/ is not allowed")
    return real


def relative(workspace: Path, real: Path) -> str:
    rel = real.relative_to(os.path.realpath(workspace))
    return str(rel) if str(rel) != "." else "."


def _walk(root: Path, parts: tuple[str, ...], create: bool) -> int:
    """An fd for ``root/parts``, refusing any symlink on the way."""
    try:
        return open_dir_nofollow(root, parts, create=create)
    except SymlinkInPath as exc:
        raise PathRefused(f"{exc.walked.name!r} changed into a symlink or a file; refused") from exc


def read_bytes(workspace: Path, real: Path) -> bytes:
    root = Path(os.path.realpath(workspace))
    rel = real.relative_to(root)
    fd = _walk(root, rel.parts[:-1], create=False)
    try:
        try:
            ffd = os.open(rel.parts[-1], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError as exc:
            if exc.errno == 40:  # ELOOP: the file became a symlink
                raise PathRefused(f"{rel} changed into a symlink; refused") from exc
            raise
        with os.fdopen(ffd, "rb") as handle:
            return handle.read()
    finally:
        os.close(fd)


def write_bytes(workspace: Path, real: Path, data: bytes) -> None:
    """Atomically replace (or create) ``real``, creating parent folders, never via a symlink."""
    root = Path(os.path.realpath(workspace))
    rel = real.relative_to(root)
    fd = _walk(root, rel.parts[:-1], create=True)
    name = rel.parts[-1]
    try:
        mode = 0o644
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                raise PathRefused(f"{rel} is a folder")
            if stat.S_ISREG(info.st_mode):
                mode = stat.S_IMODE(info.st_mode)
        except FileNotFoundError:
            pass
        tmp = f".{name}.co-{secrets.token_hex(4)}"
        wfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=fd)
        try:
            with os.fdopen(wfd, "wb") as handle:
                handle.write(data)
            os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=fd)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)
