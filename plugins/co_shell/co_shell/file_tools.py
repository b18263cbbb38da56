"""Workspace file tools: list, read, write, edit. Every path goes through ``pathsafe``.

Writes tell the change record first (``ctx.deps.changes.before_write``) so ``/undo``
can put the previous content back.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from pydantic_ai import ModelRetry, RunContext

from co_core import ToolResult
from co_shell import pathsafe

PAGE_SIZE = 200
READ_LIMIT = 64 * 1024  # characters of file text returned at most
SKIP_DIRS = {".git"}


def _resolve(ctx: RunContext[Any], path: str, *, write: bool = False) -> Path:
    try:
        return pathsafe.resolve(ctx.deps.workspace, path, write=write)
    except pathsafe.PathRefused as exc:
        raise ModelRetry(str(exc)) from exc


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
                lines.append(f"{rel} -> {os.readlink(item.path)}")
            elif stat.S_ISDIR(info.st_mode):
                lines.append(f"{rel}/")
                subdirs.append(Path(item.path))
            else:
                lines.append(f"{rel}  ({_size(info.st_size)})")
        if recursive:
            stack.extend(reversed(subdirs))
    return sorted(lines) if recursive else lines


def list_files(
    ctx: RunContext[Any], path: str = ".", recursive: bool = False, page: int = 1
) -> ToolResult:
    """List files and folders in the workspace (sizes shown, folders end in '/', .git skipped).

    Args:
        path: folder relative to the workspace ('.' for the top).
        recursive: also list everything below, depth first.
        page: page number when the listing has more than 200 entries.
    """
    folder = _resolve(ctx, path)
    if not folder.is_dir():
        raise ModelRetry(f"{path!r} is not a folder; give a folder path or use read_file")
    if page < 1:
        raise ModelRetry("page starts at 1")
    root = Path(os.path.realpath(ctx.deps.workspace))
    lines = _entries(root, folder, recursive)
    chunk = lines[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    has_more = page * PAGE_SIZE < len(lines)
    if not chunk:
        return ToolResult.empty(f"No files in {pathsafe.relative(ctx.deps.workspace, folder)}.")
    display = "\n".join(chunk)
    if has_more:
        display += f"\n[... {len(lines) - page * PAGE_SIZE} more entries: call again with page={page + 1} ...]"
    return ToolResult(
        display, count=len(lines), has_more=has_more, next_page=page + 1 if has_more else None
    )


def read_file(
    ctx: RunContext[Any], path: str, start_line: int = 1, end_line: int | None = None
) -> str:
    """Read a text file of the workspace, optionally only lines start_line..end_line (1-based).

    Long files are cut with a marker saying which line to continue from.
    """
    real = _resolve(ctx, path)
    if real.is_dir():
        raise ModelRetry(f"{path!r} is a folder; use list_files")
    try:
        data = pathsafe.read_bytes(ctx.deps.workspace, real)
    except FileNotFoundError as exc:
        raise ModelRetry(f"no file {path!r} in the workspace; use list_files to find it") from exc
    except pathsafe.PathRefused as exc:
        raise ModelRetry(str(exc)) from exc
    if b"\0" in data[:8192]:
        return f"{path} is a binary file ({_size(len(data))}); not shown"
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    if start_line < 1 or (end_line is not None and end_line < start_line):
        raise ModelRetry("lines are numbered from 1 and end_line must not be before start_line")
    chosen = lines[start_line - 1 : end_line]
    out, used, last = [], 0, start_line - 1
    for number, line in enumerate(chosen, start_line):
        if used + len(line) > READ_LIMIT:
            if not out:  # one enormous line (minified code): show its start
                cut = len(line) - READ_LIMIT
                out.append(
                    f"{line[:READ_LIMIT]}\n[... line {number}: {cut} more characters cut ...]\n"
                )
                last = number
            break
        out.append(line)
        used += len(line)
        last = number
    text = "".join(out)
    end = end_line or len(lines)
    if last < min(end, len(lines)):
        text += f"\n[... cut at line {last} of {len(lines)}: call read_file with start_line={last + 1} for more ...]"
    return text or f"{path} has no lines in that range (it has {len(lines)} lines)"


def _undoable(real: Path, path: str) -> None:
    """Refuse to overwrite what the change record could not keep a copy of."""
    from co_core import MAX_KEPT_BYTES

    if real.is_file() and real.stat().st_size > MAX_KEPT_BYTES:
        raise ModelRetry(
            f"{path!r} is larger than {MAX_KEPT_BYTES // 2**20} MB, too big to keep an undo "
            "copy of; it is not changed by this tool"
        )


def write_file(ctx: RunContext[Any], path: str, content: str) -> str:
    """Create or overwrite a workspace file with ``content`` (parent folders are created)."""
    real = _resolve(ctx, path, write=True)
    if real.is_dir():
        raise ModelRetry(f"{path!r} is a folder; give a file path")
    _undoable(real, path)
    root = Path(os.path.realpath(ctx.deps.workspace))
    for parent in reversed(real.parents):
        if parent.is_relative_to(root) and parent != root and not os.path.lexists(parent):
            ctx.deps.changes.before_write(parent)  # created by this write: undo removes it
    ctx.deps.changes.before_write(real)
    try:
        pathsafe.write_bytes(ctx.deps.workspace, real, content.encode("utf-8"))
    except pathsafe.PathRefused as exc:
        raise ModelRetry(str(exc)) from exc
    return f"wrote {len(content.encode())} bytes to {pathsafe.relative(ctx.deps.workspace, real)}"


def edit_file(ctx: RunContext[Any], path: str, search: str, replace: str) -> str:
    """Replace the exact text ``search`` with ``replace`` in a workspace file.

    ``search`` must occur exactly once: copy it from read_file, with enough lines around
    it to be unique.
    """
    real = _resolve(ctx, path, write=True)
    if not search:
        raise ModelRetry("search must not be empty; to create a file use write_file")
    _undoable(real, path)
    try:
        text = pathsafe.read_bytes(ctx.deps.workspace, real).decode("utf-8")
    except FileNotFoundError as exc:
        raise ModelRetry(f"no file {path!r}; use write_file to create it") from exc
    except UnicodeDecodeError as exc:
        raise ModelRetry(f"{path!r} is not UTF-8 text; it cannot be edited this way") from exc
    except pathsafe.PathRefused as exc:
        raise ModelRetry(str(exc)) from exc
    found = text.count(search)
    if found == 0:
        raise ModelRetry(
            f"the search text was not found in {path!r}; read_file it and copy the exact text"
        )
    if found > 1:
        raise ModelRetry(
            f"the search text occurs {found} times in {path!r}; include more surrounding lines "
            "so it matches once"
        )
    ctx.deps.changes.before_write(real)
    try:
        pathsafe.write_bytes(
            ctx.deps.workspace, real, text.replace(search, replace).encode("utf-8")
        )
    except pathsafe.PathRefused as exc:
        raise ModelRetry(str(exc)) from exc
    return f"edited {pathsafe.relative(ctx.deps.workspace, real)}: 1 replacement"
