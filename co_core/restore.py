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

from co_core.changes import (
    ABSENT,
    DIR,
    FILE,
    SYMLINK,
    UNKNOWN,
    Change,
    ChangeRecord,
    State,
    UndoError,
    UndoReport,
    load_turns,
    mark_undone,
)
from co_core.paths import SymlinkInPath, open_dir_nofollow


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


def _order(changes: list[Change]) -> list[Change]:
    """Folders to recreate first (shallow first), then files, then folders to remove (deep first)."""
    make = sorted((c for c in changes if c.before.kind == DIR), key=lambda c: len(c.path.parts))
    files = [c for c in changes if c.before.kind not in (DIR,)]
    gone_dirs = [c for c in files if c.before.kind == ABSENT and c.path.is_dir()]
    files = [c for c in files if c not in gone_dirs]
    gone_dirs.sort(key=lambda c: len(c.path.parts), reverse=True)
    return make + files + gone_dirs


def undo_turn(record: ChangeRecord, turn: int | None = None, *, force: bool = False) -> UndoReport:
    """Revert a turn; the undo is itself recorded as a new turn, so it can be undone too."""
    turns = load_turns(record.session_id, record.db_path or _db(record))
    if turn is None:
        candidates = [t for t in turns if not t.undone and not t.note.startswith("undo of")]
        if not candidates:
            raise UndoError("nothing to undo in this session")
        target = candidates[-1]
    else:
        matches = [t for t in turns if t.turn == turn]
        if not matches:
            known = ", ".join(str(t.turn) for t in turns) or "none"
            raise UndoError(f"no changes recorded in turn {turn} (turns with changes: {known})")
        target = matches[0]
        if target.undone:
            raise UndoError(f"turn {turn} was already undone")
    later: dict[Path, int] = {}
    for t in turns:
        if t.turn > target.turn and not t.undone and not t.note.startswith("undo of"):
            for c in t.changes:
                later.setdefault(c.path, t.turn)
    report = UndoReport(target.turn)
    record.next_turn(note=f"undo of turn {target.turn}")
    for change in _order(target.changes):
        if change.path in later and not force:
            report.skipped.append(
                f"{change.path} (changed again in turn {later[change.path]}; undo that first)"
            )
            continue
        try:
            record.before_write(change.path, source="undo")
            restore_path(change.path, change.before)
            report.restored.append(str(change.path))
        except RestoreRefused as exc:
            report.skipped.append(str(exc))
        except OSError as exc:
            report.skipped.append(f"{change.path}: {exc.strerror or exc}")
    mark_undone(record, target.turn)
    return report


def _db(record: ChangeRecord) -> Path:
    from co_core.changes import default_db

    record.db_path = default_db()
    return record.db_path
