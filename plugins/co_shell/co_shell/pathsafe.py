"""Workspace paths the model gives us, made safe.

A path is resolved with every symlink followed and refused when it ends up outside the
workspace; writes into ``.git/`` and ``.co/`` are refused, and into what git on the host
would run (a ``core.hooksPath`` folder, a script a git config names: ``sandbox.gitexec``). Reading and writing then walk
the resolved path again from the workspace with ``O_NOFOLLOW`` at every step, so a
symlink swapped in after the check makes the call fail instead of escaping. Writes go
to a temporary file renamed into place (never through a symlink). Only regular files are
read or replaced: a named pipe would block Co, a device or socket is not file content.

Messages name paths relative to the workspace, never the host's folders.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path
from typing import BinaryIO

from co_core import SymlinkInPath, open_dir_nofollow

PROTECTED = (".git", ".co")
SANDBOX_ROOT = "/workspace"
_NOT_A_FOLDER = (errno.ENOTDIR, errno.ELOOP)  # what O_NOFOLLOW|O_DIRECTORY says of a symlink


class PathRefused(ValueError):
    """The path is outside the workspace or in a protected folder; the message says which."""


class NotRegular(PathRefused):
    """The path is a named pipe, a device or a socket: the file tools leave those alone."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "a special file"


def _not_regular(rel: Path | str, mode: int) -> NotRegular:
    return NotRegular(
        f"{str(rel)!r} is {kind_of(mode)}, not a regular file; the file tools read and write "
        "regular files only"
    )


def _changed(path: str) -> PathRefused:
    return PathRefused(
        f"{path!r} changed while Co was following it (a folder swapped for a symlink, or "
        "removed); refused: call again once it is still"
    )


def resolve(workspace: Path, path: str, *, write: bool = False) -> Path:
    """The real absolute path for ``path`` (relative to the workspace, or ``/workspace/...``).

    A folder swapped for a symlink (or removed) while the path is followed is refused, with
    the reason, like any other path Co cannot be sure of."""
    try:
        return _resolve(workspace, path, write)
    except OSError as exc:
        raise _changed(path) from exc


def _resolve(workspace: Path, path: str, write: bool) -> Path:
    if not path or "\0" in path:
        raise PathRefused("give a path relative to the workspace, e.g. 'src/main.py'")
    root = Path(os.path.realpath(workspace))
    if path == SANDBOX_ROOT or path.startswith(SANDBOX_ROOT + "/"):
        path = path[len(SANDBOX_ROOT) :].lstrip("/") or "."
    candidate = Path(path) if os.path.isabs(path) else root / path
    real = Path(os.path.realpath(candidate))
    if real != root and not real.is_relative_to(root):
        given = "that absolute path" if os.path.isabs(path) else repr(path)
        raise PathRefused(
            f"{given} is outside the workspace; use a path relative to it, e.g. 'src/main.py'"
        )
    rel = real.relative_to(root)
    if write:
        if real == root:
            raise PathRefused("cannot write the workspace folder itself; name a file")
        protected = [part for part in rel.parts if part in PROTECTED]
        if protected:  # at any depth: a nested repository's .git is just as precious
            raise PathRefused(f"writing inside {protected[0]}/ is not allowed")
        ran_by_git = _run_by_git(root, str(rel))
        if ran_by_git:
            raise PathRefused(
                f"writing {str(rel)!r} is not allowed: git on the user's machine runs what is "
                f"in {ran_by_git!r} (a hooks folder or a script its configuration names); "
                "ask the user to change it"
            )
    return real


def _run_by_git(root: Path, rel: str) -> str | None:
    """The protected path (see ``sandbox.gitexec``) that ``rel`` is or lies in, if any:
    the file tools keep out of what git would run, as the sandboxes do."""
    from co_shell.sandbox import gitexec

    found = gitexec.survey(root)
    for path in sorted(found.protect | found.watch):
        if rel == path or rel.startswith(path + "/"):
            return path
    return None


def relative(workspace: Path, real: Path) -> str:
    rel = real.relative_to(os.path.realpath(workspace))
    return str(rel) if str(rel) != "." else "."


def _walk(root: Path, parts: tuple[str, ...], create: bool) -> int:
    """An fd for ``root/parts``, refusing any symlink on the way."""
    try:
        return open_dir_nofollow(root, parts, create=create)
    except SymlinkInPath as exc:
        rel = str(exc.walked.relative_to(root))
        try:
            mode = os.lstat(exc.walked).st_mode
        except OSError:
            mode = 0
        if stat.S_ISLNK(mode):
            raise PathRefused(f"{rel!r} changed into a symlink; refused") from exc
        if mode and not stat.S_ISDIR(mode):
            raise PathRefused(f"{rel!r} is a file, not a folder") from exc
        cause = exc.__cause__
        if isinstance(cause, OSError) and cause.errno in _NOT_A_FOLDER:
            # a symlink or not a folder when opened; a folder again, or gone, now: swapped
            raise _changed(rel) from exc
        if isinstance(cause, OSError):
            raise cause from None  # e.g. permission denied: said by the tool
        raise


def open_regular(workspace: Path, real: Path) -> BinaryIO:
    """``real`` opened for reading, if it is a regular file (NotRegular otherwise).

    Opened non-blocking, so a named pipe swapped in after the check cannot block either;
    the open file is checked again.
    """
    root = Path(os.path.realpath(workspace))
    rel = real.relative_to(root)
    fd = _walk(root, rel.parts[:-1], create=False)
    try:
        info = os.stat(rel.parts[-1], dir_fd=fd, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            raise PathRefused(f"{str(rel)!r} changed into a symlink; refused")
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular(rel, info.st_mode)
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            ffd = os.open(rel.parts[-1], flags, dir_fd=fd)
        except OSError as exc:
            if exc.errno == 40:  # ELOOP: the file became a symlink
                raise PathRefused(f"{str(rel)!r} changed into a symlink; refused") from exc
            raise
    finally:
        os.close(fd)
    mode = os.fstat(ffd).st_mode
    if not stat.S_ISREG(mode):
        os.close(ffd)
        raise _not_regular(rel, mode)
    return os.fdopen(ffd, "rb")


def read_bytes(workspace: Path, real: Path) -> bytes:
    """The whole content of a regular file (callers check its size first)."""
    with open_regular(workspace, real) as handle:
        return handle.read()


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
            if stat.S_ISREG(info.st_mode):
                mode = stat.S_IMODE(info.st_mode)
            elif not stat.S_ISLNK(info.st_mode):  # a symlink is replaced, never followed
                raise _not_regular(rel, info.st_mode)
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
