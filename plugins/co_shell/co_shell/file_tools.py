"""Workspace file tools: list, read, write, edit. Every path goes through ``pathsafe``.

Writes tell the change record first (``ctx.deps.changes.before_write``) so ``/undo``
can put the previous content back. Errors are said in the tools' own words, naming the
path relative to the workspace: never a Python exception text with the host's folders.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from co_core import ModelRetry, ToolContext, ToolResult
from co_shell import pathsafe

PAGE_SIZE = 200
READ_LIMIT = 64 * 1024  # bytes of file text returned at most (so at most as many characters)
BINARY_SNIFF = 8192  # a NUL byte in this many first bytes: a binary file
SKIP_DIRS = {".git"}

REASONS = {
    errno.ENOENT: "it does not exist",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENAMETOOLONG: "the name is too long",
    errno.ELOOP: "too many levels of symlinks",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the file system is read-only",
    errno.EBUSY: "it is in use",
    errno.ETXTBSY: "it is in use",
    errno.EIO: "the disk reported an input/output error",
}


def _resolve(ctx: ToolContext, path: str, *, write: bool = False) -> Path:
    try:
        return pathsafe.resolve(ctx.deps.workspace, path, write=write)
    except pathsafe.PathRefused as exc:
        raise ModelRetry(str(exc)) from exc


def _shown(ctx: ToolContext, real: Path) -> str:
    """How a resolved path is named in messages: relative to the workspace."""
    return pathsafe.relative(ctx.deps.workspace, real)


@contextlib.contextmanager
def _plainly(action: str, shown: str, missing: str | None = None) -> Iterator[None]:
    """What goes wrong on disk, as a retry message naming ``shown`` (never ``exc.filename``)."""
    try:
        yield
    except pathsafe.PathRefused as exc:
        raise ModelRetry(str(exc)) from exc
    except FileNotFoundError as exc:
        raise ModelRetry(missing or f"cannot {action} {shown!r}: it does not exist") from exc
    except OSError as exc:
        reason = REASONS.get(exc.errno or 0) or (exc.strerror or "operating system error").lower()
        raise ModelRetry(f"cannot {action} {shown!r}: {reason}") from exc


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _entries(root: Path, folder: Path, recursive: bool) -> list[str]:
    lines: list[str] = []
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for item in items:
            if item.name in SKIP_DIRS:
                continue
            rel = os.path.relpath(item.path, root)
            try:
                info = item.stat(follow_symlinks=False)
            except OSError:
                lines.append(f"{rel}  (unreadable)")
                continue
            if stat.S_ISLNK(info.st_mode):
                try:
                    lines.append(f"{rel} -> {os.readlink(item.path)}")
                except OSError:
                    lines.append(f"{rel} -> (unreadable link)")
            elif stat.S_ISDIR(info.st_mode):
                lines.append(f"{rel}/")
                subdirs.append(Path(item.path))
            else:
                lines.append(f"{rel}  ({_size(info.st_size)})")
        if recursive:
            stack.extend(reversed(subdirs))
    return sorted(lines) if recursive else lines


def list_files(
    ctx: ToolContext, path: str = ".", recursive: bool = False, page: int = 1
) -> ToolResult:
    """List the files and folders in the workspace (path: a folder, '.' the top)."""
    folder = _resolve(ctx, path)
    shown = _shown(ctx, folder)
    if page < 1:
        raise ModelRetry("page starts at 1")
    missing = f"no folder {shown!r} in the workspace; list_files('.') shows what exists"
    with _plainly("list", shown, missing):
        if not stat.S_ISDIR(os.stat(folder).st_mode):
            raise ModelRetry(f"{shown!r} is not a folder; give a folder path or use read_file")
    root = Path(os.path.realpath(ctx.deps.workspace))
    lines = _entries(root, folder, recursive)
    chunk = lines[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    has_more = page * PAGE_SIZE < len(lines)
    if not chunk:
        return ToolResult.empty(f"No files in {shown}.")
    display = "\n".join(chunk)
    if has_more:
        display += f"\n[... {len(lines) - page * PAGE_SIZE} more entries: call again with page={page + 1} ...]"
    return ToolResult(
        display, count=len(lines), has_more=has_more, next_page=page + 1 if has_more else None
    )


def read_file(ctx: ToolContext, path: str, start_line: int = 1, end_line: int | None = None) -> str:
    """Read a text file of the workspace (lines start_line to end_line)."""
    real = _resolve(ctx, path)
    shown = _shown(ctx, real)
    if start_line < 1 or (end_line is not None and end_line < start_line):
        raise ModelRetry("lines are numbered from 1 and end_line must not be before start_line")
    missing = f"no file {shown!r} in the workspace; list_files shows what exists"
    with _plainly("read", shown, missing):
        if os.path.isdir(real):
            raise ModelRetry(f"{shown!r} is a folder; use list_files")
        with pathsafe.open_regular(ctx.deps.workspace, real) as handle:
            size = os.fstat(handle.fileno()).st_size
            if b"\0" in handle.read(BINARY_SNIFF):
                return f"{shown} is a binary file ({_size(size)}); not shown"
            handle.seek(0)
            return _read_lines(handle, shown, size, start_line, end_line)


def _read_lines(handle: BinaryIO, shown: str, size: int, start: int, end: int | None) -> str:
    """Lines ``start..end``, at most READ_LIMIT bytes of them, reading no further than needed.

    Lines are read in pieces of at most READ_LIMIT + 1 bytes, so neither a huge file nor
    one enormous line (minified code, a sparse file's hole) is ever held whole.
    """
    out: list[bytes] = []
    used = 0
    number = 0  # the line the current piece belongs to
    at_start = True  # the next piece begins a new line
    last = start - 1  # the last line shown whole
    cut_line = None  # a line too long to show whole, shown up to READ_LIMIT
    more = False  # something of the range was left out
    while True:
        piece = handle.readline(READ_LIMIT + 1)
        if not piece:
            if out and not at_start:
                last = number  # the file's last line, with no newline after it
            break
        if at_start:
            number += 1
        at_start = piece.endswith(b"\n")
        if number < start:
            continue
        if end is not None and number > end:
            break
        if used + len(piece) > READ_LIMIT:
            more = True
            if not out:  # one enormous line: show its beginning
                out.append(piece[:READ_LIMIT])
                cut_line = last = number
            break
        out.append(piece)
        used += len(piece)
        if at_start:
            last = number
    text = b"".join(out).decode("utf-8", errors="replace")
    if not out:
        return f"{shown} has no lines in that range (it has {number} lines)"
    if cut_line is not None:
        text += (
            f"\n[... line {cut_line}: more characters cut (the file has {_size(size)}): call "
            f"read_file with start_line={cut_line + 1} for the next line ...]"
        )
    elif more:
        text += (
            f"\n[... cut at line {last} of a {_size(size)} file: call read_file with "
            f"start_line={last + 1} for more ...]"
        )
    return text


def _undoable(real: Path, shown: str) -> None:
    """Refuse to overwrite what the change record could not keep a copy of."""
    from co_core import MAX_KEPT_BYTES

    if os.path.isfile(real) and os.stat(real).st_size > MAX_KEPT_BYTES:
        raise ModelRetry(
            f"{shown!r} is larger than {MAX_KEPT_BYTES // 2**20} MB, too big to keep an undo "
            "copy of; it is not changed by this tool"
        )


def _replaceable(root: Path, real: Path, shown: str) -> None:
    """Refuse a target that is a folder, a pipe, a device or a socket, or lies under a file."""
    for parent in reversed(real.parents):
        if parent.is_relative_to(root) and parent != root and os.path.lexists(parent):
            if not os.path.isdir(parent):
                raise ModelRetry(
                    f"{pathsafe.relative(root, parent)!r} is a file, not a folder; cannot "
                    f"write {shown!r} inside it"
                )
    try:
        mode = os.lstat(real).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        raise ModelRetry(f"{shown!r} is a folder; give a file path")
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        raise pathsafe.NotRegular(
            f"{shown!r} is {pathsafe.kind_of(mode)}, not a regular file; the file tools read "
            "and write regular files only"
        )


def write_file(ctx: ToolContext, path: str, content: str) -> str:
    """Create or overwrite a file in the workspace."""
    real = _resolve(ctx, path, write=True)
    shown = _shown(ctx, real)
    root = Path(os.path.realpath(ctx.deps.workspace))
    with _plainly("write", shown):
        _replaceable(root, real, shown)
        _undoable(real, shown)
        for parent in reversed(real.parents):
            if parent.is_relative_to(root) and parent != root and not os.path.lexists(parent):
                ctx.deps.changes.before_write(parent)  # created by this write: undo removes it
        ctx.deps.changes.before_write(real)
        pathsafe.write_bytes(ctx.deps.workspace, real, content.encode("utf-8"))
    return f"wrote {len(content.encode())} bytes to {shown}"


@dataclass
class _Edit:
    """A file's text being edited, and what to write back (None: nothing)."""

    text: str
    new: str | None = None


@contextlib.contextmanager
def _editing(ctx: ToolContext, real: Path, shown: str) -> Iterator[_Edit]:
    """A workspace text file's content to change: the edit sets ``new``, which is written
    back after the change record kept the old content (``/undo``)."""
    with _plainly("edit", shown, f"no file {shown!r}; use write_file to create it"):
        if os.path.isdir(real):
            raise ModelRetry(f"{shown!r} is a folder; give a file path")
        _undoable(real, shown)
        try:
            edit = _Edit(pathsafe.read_bytes(ctx.deps.workspace, real).decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ModelRetry(f"{shown!r} is not UTF-8 text; it cannot be edited this way") from exc
        yield edit
        if edit.new is not None:
            ctx.deps.changes.before_write(real)
            pathsafe.write_bytes(ctx.deps.workspace, real, edit.new.encode("utf-8"))


def edit_file(ctx: ToolContext, path: str, search: str, replace: str) -> str:
    """Replace text in a workspace file (search must occur exactly once)."""
    real = _resolve(ctx, path, write=True)
    shown = _shown(ctx, real)
    if not search:
        raise ModelRetry("search must not be empty; to create a file use write_file")
    if search == replace:
        raise ModelRetry("search and replace are the same text: nothing would change")
    if not ctx.deps.allows(f"fs:read:{shown}"):
        # whether the search text is there would tell what the file holds
        raise ModelRetry(
            f"the rules keep {shown!r} from being read, and edit_file must read it to find "
            "the text; use write_file to replace it whole, or set_file_value for one setting"
        )
    with _editing(ctx, real, shown) as edit:
        found = edit.text.count(search)
        if found == 0:
            raise ModelRetry(
                f"the search text was not found in {shown!r}; read_file it and copy the exact text"
            )
        if found > 1:
            raise ModelRetry(
                f"the search text occurs {found} times in {shown!r}; include more surrounding "
                "lines so it matches once"
            )
        edit.new = edit.text.replace(search, replace)
    return f"edited {shown}: 1 replacement"


def set_file_value(ctx: ToolContext, path: str, key: str, value: str) -> str:
    """Change (replace) a config file's setting: key (or section.key) = value."""
    from co_shell.config_values import NotSet
    from co_shell.config_values import set_value as change

    real = _resolve(ctx, path, write=True)
    shown = _shown(ctx, real)
    suffix = real.suffix.lower()
    with _editing(ctx, real, shown) as edit:
        try:
            done = change(
                edit.text,
                key,
                value,
                typed=suffix in (".json", ".toml"),
                yaml=suffix in (".yaml", ".yml"),
            )
        except NotSet as exc:
            raise ModelRetry(f"{shown}: {exc}; read_file it to see its settings") from exc
        edit.new = done.text
    if not ctx.deps.allows(f"fs:read:{shown}"):
        # the rules keep this file from being read: nothing of its text is shown (its old
        # value, the comment after it), only what the call itself gave
        return f"set {key} in {shown}, line {done.line}: now {value} (its old value is not shown)"
    return f"set {key} in {shown}, line {done.line}: {done.before.strip()} -> {done.after.strip()}"
