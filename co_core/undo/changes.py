"""The change record behind ``/undo``: every tool that writes a file calls ``before_write`` first.

The previous state of a path (its bytes, a symlink's target, a directory, or its absence)
is kept per session and turn in SQLite in the data dir, so a turn's file changes can be
listed with diffs and reverted later, whichever plugin made them, even after Co exits.
Shell commands are covered by comparing cheap snapshots taken before and after them
(``co_core.undo.snapshots``). Restoring goes through ``co_core.undo.restore``, which never follows
a symlink.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from co_core.kernel.errors import CoError
from co_core.undo import snapshots
from co_core.undo.restore import RestoreRefused, restore_path
from co_core.undo.state import ABSENT, DIR, UNKNOWN, State

SCHEMA = """
CREATE TABLE IF NOT EXISTS changes (
    id INTEGER PRIMARY KEY,
    session TEXT NOT NULL,
    turn INTEGER NOT NULL,
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    data BLOB,
    mode INTEGER,
    after_kind TEXT,
    after_data BLOB,
    source TEXT NOT NULL DEFAULT 'tool',
    at REAL NOT NULL,
    UNIQUE (session, turn, path)
);
CREATE TABLE IF NOT EXISTS turns (
    session TEXT NOT NULL,
    turn INTEGER NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    undone INTEGER NOT NULL DEFAULT 0,
    at REAL NOT NULL,
    PRIMARY KEY (session, turn)
);
"""


class UndoError(CoError):
    """Nothing to undo, or the chosen turn does not exist."""


@dataclass
class Change:
    """One path as it was before a turn changed it (and, once known, after)."""

    session: str
    turn: int
    path: Path
    before: State
    after: State | None = None
    source: str = "tool"

    @property
    def restorable(self) -> bool:
        return self.before.kind != UNKNOWN


@dataclass
class Turn:
    session: str
    turn: int
    note: str
    undone: bool
    at: float
    changes: list[Change] = field(default_factory=list)


def default_db() -> Path:
    """``changes.sqlite3`` in the data directory; where that cannot be written (a read-only
    home), a private file of this process's, removed when it exits: ``/undo`` still
    covers the session."""
    from co_core.kernel import paths

    if paths.writable("data") is None:
        return paths.data_dir() / "changes.sqlite3"
    import atexit
    import tempfile

    fd, name = tempfile.mkstemp(prefix="co-changes-", suffix=".sqlite3")
    os.close(fd)
    atexit.register(_remove, Path(name))
    return Path(name)


def _remove(path: Path) -> None:
    for leftover in (path, path.with_name(path.name + "-journal")):
        try:
            leftover.unlink()
        except OSError:
            pass


def _normal(path: Path) -> Path:
    """Absolute path with the parent's symlinks resolved; the last part is kept as is."""
    path = Path(os.path.abspath(path))
    return Path(os.path.realpath(path.parent)) / path.name


@dataclass
class ChangeRecord:
    """Per-session record of file changes; persists on every write so a crash loses nothing."""

    session_id: str
    turn: int = 0
    db_path: Path | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _synced: bool = field(default=False, repr=False)
    _dirty: bool = field(default=False, repr=False)  # the current turn recorded something
    _note: str = field(default="", repr=False)

    # -- storage -------------------------------------------------------------------------

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        if self.db_path is None:
            self.db_path = default_db()
        conn = sqlite3.connect(self.db_path, timeout=10)
        try:
            conn.executescript(SCHEMA)
            with conn:
                yield conn
        finally:
            conn.close()
        try:
            os.chmod(self.db_path, 0o600)
        except OSError:
            pass

    def _sync(self, conn: sqlite3.Connection) -> None:
        """A resumed session continues after its last stored turn (nothing is lost renumbering:
        turns of this process before its first write changed nothing)."""
        if not self._synced:
            row = conn.execute(
                "SELECT MAX(turn) FROM turns WHERE session = ?", (self.session_id,)
            ).fetchone()
            if row[0] is not None and row[0] >= self.turn:
                self.turn = row[0] + 1
            self._synced = True

    def _ensure_turn(self, conn: sqlite3.Connection) -> None:
        conn.execute(
            "INSERT OR IGNORE INTO turns (session, turn, note, at) VALUES (?, ?, ?, ?)",
            (self.session_id, self.turn, self._note, time.time()),
        )

    # -- recording -----------------------------------------------------------------------

    @property
    def changes(self) -> list[Change]:
        """This session's changes, oldest first."""
        return [c for t in self.turns() for c in t.changes]

    def next_turn(self, note: str = "") -> int:
        """Start a new turn (the agent calls this per user message); returns its number.

        Touches the database only if the turn that ends changed something.
        """
        with self._lock:
            if self._dirty:
                with self._db() as conn:
                    self._close_turn(conn)
            self._dirty = False
            self.turn += 1
            self._note = note
            return self.turn

    def _close_turn(self, conn: sqlite3.Connection) -> None:
        """Remember how the current turn left its files, for diffs after later turns."""
        rows = conn.execute(
            "SELECT id, path FROM changes WHERE session = ? AND turn = ? AND after_kind IS NULL",
            (self.session_id, self.turn),
        ).fetchall()
        for row_id, path in rows:
            after = State.of(Path(path))
            conn.execute(
                "UPDATE changes SET after_kind = ?, after_data = ? WHERE id = ?",
                (after.kind, after.data, row_id),
            )

    def before_write(self, path: Path, *, source: str = "tool") -> None:
        """Remember how ``path`` looks now, once per turn, before a tool changes it."""
        self.record(_normal(Path(path)), State.of(_normal(Path(path))), source=source)

    def record(self, path: Path, before: State, *, source: str = "tool") -> None:
        """Store a known previous state (the shell snapshot uses this); first one wins."""
        with self._lock, self._db() as conn:
            self._sync(conn)
            self._ensure_turn(conn)
            conn.execute(
                "INSERT OR IGNORE INTO changes (session, turn, path, kind, data, mode, source, at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.session_id,
                    self.turn,
                    str(path),
                    before.kind,
                    before.data,
                    before.mode,
                    source,
                    time.time(),
                ),
            )
            self._dirty = True

    @contextmanager
    def watch(self, root: Path) -> Iterator[None]:
        """Record what changes under ``root`` inside the block (a shell command's effects),
        by comparing snapshots taken before and after it."""
        before = snapshots.take(root)
        try:
            yield
        finally:
            snapshots.record_since(self, before)

    # -- reading -------------------------------------------------------------------------

    def turns(self, *, with_changes: bool = True) -> list[Turn]:
        return load_turns(self.session_id, self.db_path or default_db(), with_changes)

    def undo(self, turn: int | None = None, *, force: bool = False) -> UndoReport:
        """Revert one turn (default: the last one with changes not undone yet)."""
        return undo_turn(self, turn, force=force)


@dataclass
class UndoReport:
    """What an undo did to each path, in words that say it: a file the turn created is
    *removed*, one it changed or deleted is *restored*."""

    turn: int
    restored: list[str] = field(default_factory=list)  # put back as before the turn
    removed: list[str] = field(default_factory=list)  # created by the turn, now gone
    skipped: list[str] = field(default_factory=list)

    def text(self) -> str:
        done = [
            f"{len(paths)} {verb}"
            for verb, paths in (("removed", self.removed), ("restored", self.restored))
            if paths
        ]
        if self.skipped:
            done.append(f"{len(self.skipped)} left as they are")
        lines = [f"Undid turn {self.turn}: {', '.join(done) or 'nothing to do'}."]
        lines += [f"  removed {p} (the turn created it)" for p in self.removed]
        lines += [f"  restored {p}" for p in self.restored]
        lines += [f"  not restored: {p}" for p in self.skipped]
        return "\n".join(lines)


def _state(kind: str, data: bytes | None, mode: int | None = None) -> State:
    return State(kind, data, mode)


def load_turns(session: str, db: Path, with_changes: bool = True) -> list[Turn]:
    """Turns of a session that changed something (or undid something), oldest first."""
    if not db.exists():
        return []
    conn = sqlite3.connect(db, timeout=10)
    try:
        conn.executescript(SCHEMA)
        turns = {
            row[0]: Turn(session, row[0], row[1], bool(row[2]), row[3])
            for row in conn.execute(
                "SELECT turn, note, undone, at FROM turns WHERE session = ? ORDER BY turn",
                (session,),
            )
        }
        if with_changes:
            for row in conn.execute(
                "SELECT turn, path, kind, data, mode, after_kind, after_data, source"
                " FROM changes WHERE session = ? ORDER BY id",
                (session,),
            ):
                after = _state(row[5], row[6]) if row[5] else None
                change = Change(
                    session, row[0], Path(row[1]), _state(row[2], row[3], row[4]), after, row[7]
                )
                turns[row[0]].changes.append(change)
    finally:
        conn.close()
    return [t for t in turns.values() if t.changes or not with_changes]


def mark_undone(record: ChangeRecord, turn: int) -> None:
    with record._db() as conn:
        conn.execute(
            "UPDATE turns SET undone = 1 WHERE session = ? AND turn = ?",
            (record.session_id, turn),
        )


def sessions(db: Path | None = None) -> list[tuple[str, float, int]]:
    """(session, last change time, number of changes), most recent first."""
    db = db or default_db()
    if not db.exists():
        return []
    conn = sqlite3.connect(db, timeout=10)
    try:
        conn.executescript(SCHEMA)
        return [
            (row[0], row[1], row[2])
            for row in conn.execute(
                "SELECT session, MAX(at), COUNT(*) FROM changes GROUP BY session"
                " ORDER BY MAX(at) DESC"
            )
        ]
    finally:
        conn.close()


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
    turns = load_turns(record.session_id, record.db_path or default_db())
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
            done = report.removed if change.before.kind == ABSENT else report.restored
            done.append(str(change.path))
        except RestoreRefused as exc:
            report.skipped.append(str(exc))
        except OSError as exc:
            report.skipped.append(f"{change.path}: {exc.strerror or exc}")
    mark_undone(record, target.turn)
    return report
