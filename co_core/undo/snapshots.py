"""Cheap before/after pictures of a workspace, so what a shell command changed can be undone.

A snapshot lists every path (names, kinds, sizes, mtimes, inodes) without following
symlinks, and keeps the bytes of small regular files within a budget. Comparing it with
a second (metadata-only) snapshot after the command says what was created, changed or
deleted; the change record then gets the previous state of each such path. Limits, stated
honestly in docs/shell.md: big files, files beyond the budget and changes outside the
workspace or inside ``.git``/``.co`` cannot be undone; a change that keeps size and mtime
identical is not seen.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from co_core.undo.state import ABSENT, DIR, FILE, SYMLINK, UNKNOWN, State

if TYPE_CHECKING:
    from co_core.undo.changes import ChangeRecord

# not tracked, at any depth: version control, Co's own folder, environments and caches
SKIPPED_DIRS = frozenset(
    {".git", ".co", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox"}
)  # fmt: skip
# not tracked whatever they are: a sandbox's placeholder for a missing one is an empty
# file or folder that comes and goes with a command, never a change to undo
OWN_NAMES = frozenset({".git", ".co"})
KEEP_FILE_BYTES = 256 * 1024
KEEP_TOTAL_BYTES = 32 * 1024 * 1024
MAX_ENTRIES = 50_000


@dataclass
class Entry:
    kind: str
    size: int
    mtime_ns: int
    inode: int
    mode: int


@dataclass
class Snapshot:
    root: Path
    entries: dict[str, Entry] = field(default_factory=dict)
    kept: dict[str, State] = field(default_factory=dict)
    complete: bool = True  # False: too many files, the rest was not looked at


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return SYMLINK
    if stat.S_ISDIR(mode):
        return DIR
    if stat.S_ISREG(mode):
        return FILE
    return UNKNOWN


_last: dict[Path, Snapshot] = {}  # per workspace: bytes of files unchanged since are reused


def take(root: Path, *, keep_contents: bool = True, max_entries: int = MAX_ENTRIES) -> Snapshot:
    """Walk ``root`` (no symlink is followed); keep small files' bytes when asked.

    Bytes kept by the previous snapshot of the same workspace are reused for files whose
    size, mtime and inode did not change, so only new or changed files are read.
    """
    root = Path(os.path.realpath(root))
    snap = Snapshot(root)
    previous = _last.get(root) if keep_contents else None
    budget = KEEP_TOTAL_BYTES
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                items = list(it)
        except OSError:
            continue
        for item in items:
            if item.name in SKIPPED_DIRS and (
                item.name in OWN_NAMES or item.is_dir(follow_symlinks=False)
            ):
                continue
            if len(snap.entries) >= max_entries:
                snap.complete = False
                break
            try:
                info = item.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = os.path.relpath(item.path, root)
            kind = _kind(info.st_mode)
            entry = Entry(
                kind, info.st_size, info.st_mtime_ns, info.st_ino, stat.S_IMODE(info.st_mode)
            )
            snap.entries[rel] = entry
            reused = previous.kept.get(rel) if previous is not None else None
            if (
                reused is not None
                and previous is not None
                and previous.entries.get(rel) == entry
                and kind != DIR
            ):
                snap.kept[rel] = reused
                budget -= len(reused.data or b"")
            elif kind == DIR:
                stack.append(Path(item.path))
            elif keep_contents and kind == SYMLINK:
                snap.kept[rel] = State(SYMLINK, os.fsencode(os.readlink(item.path)))
            elif keep_contents and kind == FILE and info.st_size <= min(KEEP_FILE_BYTES, budget):
                state = State.of(Path(item.path), KEEP_FILE_BYTES)
                if state.kind == FILE:
                    budget -= len(state.data or b"")
                    snap.kept[rel] = state
        if not snap.complete:
            break
    if keep_contents:
        _last[root] = snap
    return snap


def _differs(a: Entry, b: Entry) -> bool:
    if a.kind != b.kind:
        return True
    if a.kind == DIR:
        return False  # a folder's own mtime moves with its children: only existence counts
    return (a.size, a.mtime_ns, a.inode, a.mode) != (b.size, b.mtime_ns, b.inode, b.mode)


def diff(before: Snapshot, after: Snapshot) -> dict[str, State]:
    """Paths that changed between two snapshots, each with its previous state."""
    changed: dict[str, State] = {}
    whole = before.complete and after.complete  # else a path missing from one may be unseen
    for rel, entry in after.entries.items():
        old = before.entries.get(rel)
        if old is None:
            if whole:
                changed[rel] = State(ABSENT)
        elif _differs(old, entry):
            changed[rel] = _previous(before, rel, old)
    if whole:
        for rel, old in before.entries.items():
            if rel not in after.entries:
                changed[rel] = _previous(before, rel, old)
    return changed


def _previous(before: Snapshot, rel: str, old: Entry) -> State:
    if old.kind == DIR:
        return State(DIR, None, old.mode)
    return before.kept.get(rel) or State(UNKNOWN)


def record_since(record: ChangeRecord, before: Snapshot) -> list[str]:
    """Compare the workspace with ``before`` and store each change; returns the changed paths."""
    after = take(before.root, keep_contents=False)
    changed = diff(before, after)
    for rel in sorted(changed):
        record.record(before.root / rel, changed[rel], source="shell")
    return sorted(changed)
