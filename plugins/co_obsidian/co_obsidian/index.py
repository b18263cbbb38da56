"""The vault index: SQLite FTS5 in Co's cache dir, kept in step with the files.

One database per vault (``cache_dir()/obsidian/<name>-<hash>.sqlite``). Searches use it
once it covers the vault; until then they are answered by :mod:`co_obsidian.scan`
(ripgrep) while a background thread builds it, however small the vault. An index that
an earlier Co completed answers at once, while the background thread checks the vault
for changes behind it. Later, bringing it up to date is done before answering when that
means (re)indexing a few notes (up to SYNC_NOTES, SYNC_BYTES), and in the background
otherwise (thousands of notes changed by a sync). The background thread walks the vault
and parses notes holding no lock, so searches go on meanwhile. Builds commit every
BATCH_NOTES notes, so a build cut short (Co exits, Ctrl+C) keeps what it did and the
next Co carries on from there; a Co that exits mid-build first gives it CLOSE_GRACE
seconds.

Co's own writes (:meth:`VaultIndex.note_changed`) are indexed at once, in the
foreground, however far a build is: the builder works from the walk it made when it
started, and searches it is running behind do not bring the index up to date. Until a
sync after the build has looked at them, every query checks those notes again (the
builder may have parsed one just before Co wrote it).

Keeping in step: with change notifications (:mod:`co_obsidian.watch`) only the notes
named in them are looked at again, and every note is stat-ed once a minute as a safety
net; without them, folder mtimes are checked before every query and every note is
stat-ed when the last check is older than ``recheck_seconds``. Search results are
verified against the note on disk, so a stale index can miss a fresh edit for a moment
but never shows text that is no longer there. A deleted, corrupt or outdated database
is rebuilt.

The FTS table is contentless: a changed note gets a new row id and the old row is left
behind as dead weight (the join with ``notes`` skips it); when dead rows outnumber live
ones the index is emptied and built again.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import operator
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from co_core import span
from co_obsidian import rank, scan, store
from co_obsidian import text as T
from co_obsidian.links import on_disk, resolve_link
from co_obsidian.paging import Allowed, Hit, Pages, Verdicts, page
from co_obsidian.progress import BuildProgress
from co_obsidian.store import SCHEMA
from co_obsidian.vault import (
    FileStat,
    VaultError,
    is_note_name,
    read_text,
    relative,
    resolve_inside,
    stat_note,
    stem,
    walk,
)
from co_obsidian.watch import Watcher

SYNC_NOTES = 200  # up to this many notes to (re)index are indexed before answering ...
SYNC_BYTES = 1_000_000  # ... if they hold no more than this; else in the background
BATCH_NOTES = 200  # a build commits after every batch: an interrupted one keeps its work
# When Co exits during a build, it goes on this long first: a few short `co ask` runs
# then complete the index of a large vault between them
CLOSE_GRACE = 2.0
PAGE_CACHES = 16  # queries whose candidates are kept for their next pages


class _Later(Exception):
    """Too much to index before answering: the background builder does it."""


class _Stopped(Exception):
    """Co is exiting: the build stops after the batch it is on."""


@dataclass
class LinkInfo:
    """One link of a note: as written, the file it leads to (None: no such file yet)."""

    raw: str
    target: str | None
    embed: bool

    @property
    def kind(self) -> str:
        if self.target is None:
            return "missing"
        if not is_note_name(self.target):
            return "attachment"
        return "embed" if self.embed else "note"


class _Walk(NamedTuple):
    """One look at every file of the vault."""

    notes: dict[str, FileStat]
    dirs: dict[str, int]  # folder -> mtime
    links: list[str]  # symlinked notes
    attachments: list[str]


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def default_db_path(root: Path) -> Path:
    from co_core import cache_dir

    digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return cache_dir() / "obsidian" / f"{root.name[:40]}-{digest}.sqlite"


class VaultIndex:
    """Search, tags and links of one vault; thread-safe (tools may run in worker threads)."""

    def __init__(self, root: Path, db_path: Path | None = None, recheck_seconds: float = 2.0):
        self.root = root
        self.db_path = db_path or default_db_path(root)
        self.recheck_seconds = recheck_seconds
        self._lock = threading.RLock()
        self._starting = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._db_ino: int | None = None
        self._dirs: dict[str, int] = {}
        self._checked_at = float("-inf")
        self._ready = False  # the index covers the vault: searches use it
        self._prepared = False  # the first use has looked at the index on disk
        self._builder: threading.Thread | None = None
        self._waiting = False  # someone waits for the builder: it shows its progress
        self._stopping = False
        self._generation = 0  # changes whenever the index does
        self._pages: dict[tuple[str, ...], Pages] = {}
        self._listings: dict[tuple[Any, ...], list[tuple[str, str]]] = {}  # list_notes
        self._verdicts = Verdicts(root)
        self._filter: Allowed | None = None  # the last the tools used: the builder warms it
        self._symlinks: tuple[int, set[str]] = (-1, set())  # generation, symlinked notes
        self._watcher = Watcher(str(root))
        self._written: set[str] = set()  # notes Co wrote: checked by every query until synced
        self.last_refresh: dict[str, int] = {}
        self.answered_by: str | None = None  # the last search's: "index" or "rg"

    # -- database lifecycle -------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        conn = self._connect()
        os.chmod(self.db_path, 0o600)
        self._db_ino = os.stat(self.db_path).st_ino
        self._checked_at = float("-inf")
        return conn

    def _connect(self) -> sqlite3.Connection:
        """A connection to the database, made (or made again) at this schema."""
        from co_core import ensure_dir

        ensure_dir(self.db_path.parent)
        conn = sqlite3.connect(self.db_path, check_same_thread=False, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout=5000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            version = None
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone():
                row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
                version = row[0] if row else None
            if version != SCHEMA:
                conn.execute("PRAGMA foreign_keys=OFF")
                for (name,) in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'fts_%'"
                    " AND name NOT LIKE 'sqlite_%'"
                ).fetchall():
                    conn.execute(f'DROP TABLE IF EXISTS "{name}"')
                conn.execute("PRAGMA foreign_keys=ON")
                conn.executescript(store.DDL)
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA,))
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('vault', ?)", (str(self.root),))
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('dead', '0')")
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def _discard(self) -> None:
        """Forget the database (corrupt or deleted): the next use rebuilds it."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = None
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(f"{self.db_path}{suffix}")
            except OSError:
                pass

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None:
            try:
                if os.stat(self.db_path).st_ino != self._db_ino:
                    raise FileNotFoundError
            except FileNotFoundError:
                self._discard()  # deleted or replaced under us
        if self._conn is None:
            try:
                self._conn = self._open()
            except sqlite3.DatabaseError:
                self._discard()
                self._conn = self._open()
        return self._conn

    def close(self) -> None:
        """Give a background build under way CLOSE_GRACE seconds to finish, stop it after
        the batch it is on then, and close the database."""
        builder = self._builder
        if builder is not None:
            builder.join(timeout=CLOSE_GRACE)
        self._stopping = True
        if builder is not None:
            builder.join(timeout=30)
        with self._lock:
            self._watcher.close()
            if self._conn is not None:
                self._checkpoint(self._conn)
                self._conn.close()
                self._conn = None

    @staticmethod
    def _checkpoint(conn: sqlite3.Connection) -> None:
        """Fold the write-ahead log into the database file and empty it."""
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error:
            pass  # another Co reads right now: its own checkpoint will do it

    def _guarded(self, work: Callable[..., Any], *args: Any, limit: bool = True) -> Any:
        """Bring the index up to date and run ``work(conn, ...)``; a corrupt database is
        deleted and rebuilt once. With ``limit``, raise _Later instead of a large update."""
        with self._lock:
            if not self.root.is_dir():
                raise VaultError(f"Obsidian vault {self.root} is gone.")
            try:
                return self._synced(work, *args, limit=limit)
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):
                    raise VaultError(
                        "The vault index is busy (another Co is updating it); try again."
                    ) from exc
                self._discard()
            except sqlite3.DatabaseError:
                self._discard()
            return self._synced(work, *args, limit=limit)

    def _synced(self, work: Callable[..., Any], *args: Any, limit: bool) -> Any:
        conn = self._connection()
        if self.building() and threading.current_thread() is not self._builder:
            self._index_written(conn)  # Co's own writes count at once
            return work(conn, *args)  # the builder brings the rest up to date meanwhile
        if not self._sync(conn, limit):
            self._ready = False
            raise _Later
        self._index_written(conn)  # a build that just ended may have parsed one too early
        self._written.clear()
        self._ready = self._prepared = True
        return work(conn, *args)

    def building(self) -> bool:
        """True while the background thread builds the index."""
        return self._builder is not None and self._builder.is_alive()

    def _start_builder(self) -> None:
        def build() -> None:
            try:
                try:
                    self._background_sync()
                except sqlite3.OperationalError as exc:
                    if "locked" in str(exc) or "busy" in str(exc):
                        return  # another Co writes for long: the next search tries again
                    raise
            except sqlite3.DatabaseError:
                with self._lock:
                    self._discard()  # corrupt: built again from nothing
                with contextlib.suppress(Exception):
                    self._background_sync()
            except Exception:
                pass  # stopped, or the vault vanished: the next search tries again

        with self._starting:
            if not self.building() and not self._stopping:
                self._builder = threading.Thread(
                    target=build, name="co-obsidian-index", daemon=True
                )
                self._builder.start()

    def _wait_ready(self) -> None:
        """Make the index cover the vault before going on: wait for the builder (its
        progress shown), or bring it up to date here."""
        if not self._prepared:
            self._prepare()
        if self._ready:
            return
        builder = self._builder
        if builder is not None and builder.is_alive():
            self._waiting = True
            try:
                builder.join()
            finally:
                self._waiting = False
        if not self._ready:
            self._guarded(lambda conn: None, limit=False)

    # -- keeping in step with the files -------------------------------------------------

    def _dirs_changed(self) -> bool:
        for rel, mtime in self._dirs.items():
            try:
                if os.stat(self.root / rel if rel else self.root).st_mtime_ns != mtime:
                    return True
            except OSError:
                return True
        return False

    def _full_check_due(self, now: float) -> bool:
        """Stat every note now? With change notifications, only as a safety net (every
        minute, or always when ``recheck_seconds`` is 0); without, every recheck_seconds."""
        interval = self.recheck_seconds
        if self._watcher.active and interval > 0:
            interval = max(interval, 60.0)
        return now - self._checked_at >= interval

    def refresh(self, force: bool = False) -> dict[str, int]:
        """Bring the index up to date now (in the foreground); counts of added, changed
        and removed notes."""
        builder = self._builder
        if builder is not None and builder is not threading.current_thread():
            builder.join()
        with self._lock:
            if force:
                self._checked_at = float("-inf")
            return self._guarded(lambda conn: self.last_refresh, limit=False)

    def _sync(self, conn: sqlite3.Connection, limit: bool) -> bool:
        """Bring the index in step with the files; with ``limit``, only if that means
        indexing few notes (False otherwise, and nothing done)."""
        self.last_refresh = {"added": 0, "changed": 0, "removed": 0}
        if not self._full_check_due(time.monotonic()):
            if self._watcher.active:
                paths, rescan = self._watcher.changes()
                if not rescan:
                    return self._sync_paths(conn, paths, limit) if paths else True
            elif not self._dirs_changed():
                return True
        return self._sync_all(conn, self._walk(), limit)

    def _walk(self) -> _Walk:
        if not self.root.is_dir():
            raise VaultError(f"Obsidian vault {self.root} is gone.")
        seen = _Walk({}, {}, [], [])
        for f in walk(self.root, dirs=seen.dirs, links=seen.links, attachments=seen.attachments):
            seen.notes[f.rel] = f
        return seen

    def _sync_all(
        self, conn: sqlite3.Connection, seen: _Walk, limit: bool, background: bool = False
    ) -> bool:
        """Bring the index in step with ``seen`` (with ``limit``, only if that means
        indexing few notes): drop what is gone, index what is new or changed. In the
        background, a change too large to index before answering makes searches go to
        rg until it is indexed."""
        on_disk = seen.notes
        with self._lock:
            self._dirs = seen.dirs
            self._watcher.start(sorted(seen.dirs))
            if self._watcher.active and self._dirs_changed():
                self._watcher.close()  # changed while we looked: poll until the next full scan
            known = {
                path: (note_id, mtime, size)
                for note_id, path, mtime, size in conn.execute(
                    "SELECT id, path, mtime_ns, size FROM notes"
                )
            }
            dead = int(conn.execute("SELECT value FROM meta WHERE key='dead'").fetchone()[0])
        removed = [known[p][0] for p in known.keys() - on_disk.keys()]
        changed = [
            f
            for rel, f in on_disk.items()
            if rel not in known or known[rel][1:] != (f.mtime_ns, f.size)
        ]
        replaced = sum(1 for f in changed if f.rel in known)
        wipe = dead + len(removed) + replaced > max(500, len(known))
        if wipe:  # the FTS table is mostly dead rows: start it afresh
            changed, removed = list(on_disk.values()), []
        if limit and self._too_much(changed):
            self._checked_at = float("-inf")  # the builder looks again
            return False
        if background and (wipe or self._too_much(changed)):
            self._ready = False
        added = sum(1 for f in changed if f.rel not in known)
        self._apply(conn, removed, changed, seen.attachments, wipe)
        with self._lock:
            self.last_refresh = {
                "added": added,
                "changed": len(changed) - added if not wipe else 0,
                "removed": len(removed),
            }
            self._checked_at = time.monotonic()
        return True

    def _background_sync(self) -> None:
        """The builder's work, on its own connection: walk the vault, parse and write
        what changed, holding no lock but for a moment (searches and tools go on
        meanwhile, and see each batch once it is written)."""
        seen = self._walk()
        with self._lock:
            self._connection()  # the database made, or made again, at this schema
        conn = self._connect()
        try:
            self._sync_all(conn, seen, limit=False, background=True)
            self._ready = True
            if self._filter is not None:  # what the tools' next answers will ask
                paths = [p for (p,) in conn.execute("SELECT path FROM notes WHERE binary=0")]
                linked = {p for (p,) in conn.execute("SELECT path FROM notes WHERE link=1")}
                self._verdicts.warm(self._filter, linked, paths)
        finally:
            conn.close()

    def _writing(self, conn: sqlite3.Connection) -> Any:
        """What a write on ``conn`` holds: the lock for the shared connection (the
        builder writes on its own)."""
        return self._lock if conn is self._conn else contextlib.nullcontext()

    @staticmethod
    def _too_much(changed: list[FileStat]) -> bool:
        return len(changed) > SYNC_NOTES or sum(f.size for f in changed) > SYNC_BYTES

    def _sync_paths(self, conn: sqlite3.Connection, paths: set[str], limit: bool) -> bool:
        """Look again at these notes only (the watcher named them)."""
        marks = ",".join("?" * len(paths))
        known = {
            path: (note_id, mtime, size)
            for note_id, path, mtime, size in conn.execute(
                f"SELECT id, path, mtime_ns, size FROM notes WHERE path IN ({marks})", list(paths)
            )
        }
        removed: list[int] = []
        changed: list[FileStat] = []
        for rel in paths:
            now, before = stat_note(self.root, rel), known.get(rel)
            if now is None:
                if before is not None:
                    removed.append(before[0])
            elif before is None or before[1:] != (now.mtime_ns, now.size):
                changed.append(now)
        if limit and self._too_much(changed):
            self._checked_at = float("-inf")
            return False
        self._apply(conn, removed, changed, None, False)
        added = sum(1 for f in changed if f.rel not in known)
        self.last_refresh = {
            "added": added,
            "changed": len(changed) - added,
            "removed": len(removed),
        }
        return True

    def _apply(
        self,
        conn: sqlite3.Connection,
        removed: list[int],
        changed: list[FileStat],
        attachments: list[str] | None,
        wipe: bool,
    ) -> None:
        """Drop the ``removed`` notes, replace the attachment list (when given), then
        index ``changed`` in batches, each committed with the old rows of its notes
        dropped (a note is never missing while it is indexed again)."""
        with self._writing(conn):
            if attachments is not None:
                listed = {p for (p,) in conn.execute("SELECT path FROM attachments")}
                if listed == set(attachments):
                    attachments = None
            if not (removed or changed or attachments is not None or wipe):
                return
            self._generation += 1
            with _transaction(conn):
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('complete', '0')")
                if wipe:
                    conn.execute("DELETE FROM notes")
                    conn.execute("INSERT INTO fts(fts) VALUES ('delete-all')")
                    conn.execute("UPDATE meta SET value='0' WHERE key='dead'")
                self._delete(conn, removed)
                if attachments is not None:
                    conn.execute("DELETE FROM attachments")
                    conn.executemany(
                        "INSERT INTO attachments VALUES (?, ?)",
                        [(p, T.name_key(p.rpartition("/")[2])) for p in attachments],
                    )
        self._verdicts.forget(f.rel for f in changed)
        if changed:
            with span("co.index.build", notes=len(changed)):
                self._index_files(conn, changed)
        with self._writing(conn):
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('complete', '1')")
            self._generation += 1
            self._checkpoint(conn)

    @staticmethod
    def _delete(conn: sqlite3.Connection, ids: list[int]) -> None:
        """Delete these notes (their links, titles and aliases go with them); their FTS
        rows stay behind as dead rows."""
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            deleted = conn.execute(f"DELETE FROM notes WHERE id IN ({marks})", chunk).rowcount
            conn.execute("UPDATE meta SET value = value + ? WHERE key='dead'", (deleted,))

    def _index_files(self, conn: sqlite3.Connection, files: list[FileStat]) -> None:
        """Parse and insert ``files`` in batches, oldest modification first: note ids then
        follow modification order (a search matching too many notes to score lists the
        rest newest first, see _ranked)."""
        files = sorted(files, key=operator.attrgetter("mtime_ns", "rel"))
        in_builder = threading.current_thread() is self._builder
        progress = BuildProgress(len(files), show=lambda: not in_builder or self._waiting)
        try:
            for start in range(0, len(files), BATCH_NOTES):
                if start and self._stopping and in_builder:
                    raise _Stopped  # after one batch at least: every Co adds to the index
                batch = files[start : start + BATCH_NOTES]
                parsed = [store.note_rows(self.root, f) for f in batch]  # no lock held
                with self._writing(conn), _transaction(conn):
                    # another Co (or a search here) may have indexed some of these meanwhile
                    marks = ",".join("?" * len(batch))
                    again = [
                        note_id
                        for (note_id,) in conn.execute(
                            f"SELECT id FROM notes WHERE path IN ({marks})", [f.rel for f in batch]
                        )
                    ]
                    self._delete(conn, again)
                    store.insert(conn, parsed)
                    self._generation += 1
                progress.advance(len(batch))
        finally:
            progress.close()

    # -- search ----------------------------------------------------------------------------

    def search(
        self, query: T.Query, offset: int, limit: int, allowed: Allowed | None = None
    ) -> tuple[list[Hit], bool]:
        """Verified hits ``offset .. offset+limit`` in rank order, and whether more exist.
        ``allowed``: a test on a note's vault-relative path (and, for a symlinked note,
        on its target's); notes it refuses are left out as if they did not exist."""
        self._remember(allowed)
        if not self._prepared:
            self._prepare()
        if self._ready:
            try:
                self.answered_by = "index"
                return self._guarded(self._search, query, offset, limit, allowed)
            except _Later:  # thousands of notes changed since the last search
                pass
        found = self._unindexed(query, offset, limit, allowed)
        if not self._ready:
            self._start_builder()
        if found is not None:
            self.answered_by = "rg"
            return found
        self.answered_by = "index"
        return self._complete(self._search, query, offset, limit, allowed)  # no rg

    def _remember(self, allowed: Allowed | None) -> None:
        if getattr(allowed, "version", None) is not None:
            self._filter = allowed

    def _prepare(self) -> None:
        """The first use in this Co: an index an earlier Co completed answers from now
        on, while the builder checks the vault for changes behind it; a missing or
        unfinished one is built behind (rg answers searches meanwhile)."""
        self._prepared = True
        complete = False
        try:
            with self._lock:
                if self._conn is not None or self.db_path.exists():
                    conn = self._connection()
                    row = conn.execute("SELECT value FROM meta WHERE key='complete'").fetchone()
                    complete = row == ("1",)
        except sqlite3.DatabaseError:
            pass  # the builder deletes it and builds it again
        if complete and not self._ready:
            self._ready = True
            self._checked_at = time.monotonic()  # the builder makes the full check
        self._start_builder()

    def _unindexed(
        self, query: T.Query, offset: int, limit: int, allowed: Allowed | None
    ) -> tuple[list[Hit], bool] | None:
        """The search while the index is not ready (see :mod:`co_obsidian.scan`); None
        when rg is missing or failed."""
        rg = scan.executable()
        if rg is None:
            return None

        listing: list[tuple[list[str], list[str]]] = []

        def notes() -> tuple[list[str], list[str]]:  # listed (now) while rg reads the vault
            if not listing:
                links: list[str] = []
                listing.append(([f.rel for f in walk(self.root, sizes=False, links=links)], links))
            return listing[0]

        some: list[str] = []  # notes to sample for the rarest term
        if len(query.terms) > 1:
            some = list(itertools.islice((f.rel for f in walk(self.root, sizes=False)), 1000))
        ranked = scan.ranked(rg, self.root, query, notes, some)
        if ranked is None:
            return None
        linked = set(notes()[1])
        return self._page(lambda: iter(ranked), query, offset, limit, allowed, linked, None)

    def _search(
        self,
        conn: sqlite3.Connection,
        query: T.Query,
        offset: int,
        limit: int,
        allowed: Allowed | None,
    ) -> tuple[list[Hit], bool]:
        match = query.fts()
        if match is None:

            def stream() -> Iterator[str]:
                rows = conn.execute("SELECT path FROM notes WHERE binary=0 ORDER BY path")
                return (path for (path,) in rows.fetchall())

        else:

            def stream() -> Iterator[str]:
                return rank.candidates(conn, query, match)

        try:
            return self._page(stream, query, offset, limit, allowed, self._symlinked(conn), conn)
        except sqlite3.OperationalError as exc:  # an FTS5 syntax error is our bug
            if "fts5" in str(exc):
                raise VaultError(f"search failed: {exc}") from exc
            raise

    def _note_text(self, path: str) -> str | None:
        text = read_text(self.root / path, store.MAX_INDEX_CHARS * 4)
        return None if text is None else T.nfc(text[: store.MAX_INDEX_CHARS])

    def _page(
        self,
        stream: Callable[[], Iterator[str]],
        query: T.Query,
        offset: int,
        limit: int,
        allowed: Allowed | None,
        linked: set[str],
        conn: sqlite3.Connection | None,
    ) -> tuple[list[Hit], bool]:
        """One page of the candidates ``stream`` ranks (the index's, or rg's without
        ``conn``): a hit is only shown once the note's current text matches, read where
        the note really is (inside the vault, allowed). What the index's query found is
        kept for its next pages, until the index changes (see :mod:`co_obsidian.paging`)."""
        entry = self._pages.get(query.terms) if conn is not None else None
        if entry is None or entry.generation != self._generation:
            entry = Pages(self._generation)
            if conn is not None:
                self._pages.pop(query.terms, None)
                self._pages[query.terms] = entry
                while len(self._pages) > PAGE_CACHES:
                    del self._pages[next(iter(self._pages))]
        patterns = query.patterns

        def matches(path: str) -> str | None:
            target = self._verdicts.inside(path)
            if target is None or (target != path and allowed is not None and not allowed(target)):
                return None
            text = self._note_text(path)
            if text is None or not T.matches_note(T.nfc(stem(path)), text, patterns):
                return None
            return text

        ok = self._verdicts.check(allowed, linked)
        exact = conn is not None and query.index_exact
        return page(entry, stream, matches, ok, offset, limit, exact)

    def _symlinked(self, conn: sqlite3.Connection) -> set[str]:
        """The notes that are symlinks (their targets are checked too)."""
        generation, paths = self._symlinks
        if generation != self._generation:
            paths = {p for (p,) in conn.execute("SELECT path FROM notes WHERE link=1")}
            self._symlinks = (self._generation, paths)
        return paths

    # -- listing, names, links ------------------------------------------------------------

    def _complete(self, work: Callable[..., Any], *args: Any) -> Any:
        """``work(conn, ...)`` on an index that covers the vault (waiting for it)."""
        self._wait_ready()
        return self._guarded(work, *args, limit=False)

    def notes(
        self,
        tag: str | None,
        folder: str | None,
        offset: int,
        limit: int,
        allowed: Allowed | None = None,
    ) -> tuple[list[tuple[str, str]], int]:
        """(path, tags) of notes with ``tag`` (nested tags included) in ``folder``; and the total."""
        self._remember(allowed)
        return self._complete(self._notes, tag, folder, offset, limit, allowed)

    def _notes(self, conn, tag, folder, offset, limit, allowed):
        """A listing is worked out (and filtered by the user's rules) once, and kept for
        its next pages until the index or the rules change."""
        version = getattr(allowed, "version", None)
        key = (tag, folder, self._generation, version)
        keep = allowed is None or version is not None
        rows = self._listings.get(key) if keep else None
        if rows is None:
            rows = self._listed(conn, tag, folder, allowed)
            if keep:
                self._listings[key] = rows
                while len(self._listings) > PAGE_CACHES:
                    del self._listings[next(iter(self._listings))]
        shown = rows[offset : offset + limit]
        return [(p, t.strip("\t").replace("\t", ", ")) for p, t in shown], len(rows)

    def _listed(
        self, conn: sqlite3.Connection, tag: str | None, folder: str | None, allowed: Allowed | None
    ) -> list[tuple[str, str]]:
        where: list[str] = ["binary=0"]
        args: list[str | int] = []
        if tag:
            where.append("(instr(tags, ?) > 0 OR instr(tags, ?) > 0)")
            args += [f"\t{tag}\t", f"\t{tag}/"]
        if folder:
            where.append("substr(path, 1, ?) = ?")
            args += [len(folder) + 1, folder + "/"]
        rows = conn.execute(
            f"SELECT path, tags FROM notes WHERE {' AND '.join(where)} ORDER BY path", args
        ).fetchall()
        if allowed is not None:
            ok = self._verdicts.check(allowed, self._symlinked(conn))
            rows = [row for row in rows if ok(row[0])]
        return rows

    def named(self, key: str) -> list[str]:
        """Vault paths of the files (notes and attachments) whose file name, in NFC and
        lower case, is ``key``."""
        return self._complete(lambda conn: self._named_in(conn)(key))

    @staticmethod
    def _named_in(conn: sqlite3.Connection) -> Callable[[str], list[str]]:
        def named(key: str) -> list[str]:
            return sorted(
                path
                for (path,) in conn.execute(
                    "SELECT path FROM notes WHERE name_key = ? "
                    "UNION ALL SELECT path FROM attachments WHERE name_key = ?",
                    (key, key),
                )
            )

        return named

    def aliased(self, key: str) -> list[str]:
        """Vault paths of the notes with the alias ``key`` (NFC, lower case)."""
        return self._complete(
            lambda conn: [
                path
                for (path,) in conn.execute(
                    "SELECT DISTINCT n.path FROM aliases a JOIN notes n ON n.id = a.note_id "
                    "WHERE a.key = ? ORDER BY n.path",
                    (key,),
                )
            ]
        )

    def links(self, path: str, allowed: Allowed | None = None) -> tuple[list[LinkInfo], list[str]]:
        """The links a note makes (each with the file it leads to, resolved as Obsidian
        does) and the notes whose links lead to it (its backlinks)."""
        self._remember(allowed)
        return self._complete(self._links, path, allowed)

    def _links(self, conn, path, allowed):
        row = conn.execute("SELECT id, name_key FROM notes WHERE path=?", (path,)).fetchone()
        if row is None:
            return [], []
        note_id, name = row
        named = self._named_in(conn)
        outgoing = [
            LinkInfo(raw, resolve_link(link_path, path, named), bool(embed))
            for raw, link_path, embed in conn.execute(
                "SELECT raw, path, embed FROM links WHERE src=? ORDER BY rowid", (note_id,)
            )
        ]
        # the links that may lead here name this file, with or without .md (a link to
        # the note itself, [[#Heading]], names nothing)
        names = [name, name[:-3]] if is_note_name(name) else [name]
        candidates = conn.execute(
            "SELECT DISTINCT n.path, l.path FROM links l JOIN notes n ON n.id = l.src "
            f"WHERE l.name IN ({','.join('?' * len(names))}) OR (l.src = ? AND l.path = '')",
            [*names, note_id],
        ).fetchall()
        back = sorted(
            {src for src, link_path in candidates if resolve_link(link_path, src, named) == path}
        )
        if allowed is not None:
            ok = self._verdicts.check(allowed, self._symlinked(conn))
            back = [p for p in back if ok(p)]
        return outgoing, back

    def count(self) -> int:
        return self._complete(
            lambda conn: conn.execute("SELECT count(*) FROM notes WHERE binary=0").fetchone()[0]
        )

    def folder(self, typed: str) -> str | None:
        """The vault folder ``typed`` names, spelled as on disk (any case, NFC or NFD as
        macOS writes names): "" for the vault itself, None when there is no such folder.
        OutsideVault when it leads out of the vault."""
        target = resolve_inside(self.root, typed)
        if target == self.root:
            return ""
        rel = on_disk(self.root, relative(self.root, target))
        if rel is None or not (self.root / rel).is_dir():
            return None
        return rel

    def note_changed(self, path: Path) -> None:
        """A tool wrote ``path``: index it now (searchable at once, however far a build
        is), and look at the vault again on the next query."""
        self._checked_at = float("-inf")
        try:
            rel = relative(self.root, path)
        except ValueError:
            return
        with self._lock:
            self._written.add(rel)
            try:
                self._index_written(self._connection())
            except (sqlite3.Error, OSError):
                pass  # the next sync indexes it

    def _index_written(self, conn: sqlite3.Connection) -> None:
        """(Re)index the notes Co wrote whose row in the index is not their file's now."""
        with self._lock:
            if not self._written:
                return
            removed: list[int] = []
            changed: list[FileStat] = []
            for rel in sorted(self._written):
                now = stat_note(self.root, rel)
                row = conn.execute(
                    "SELECT id, mtime_ns, size FROM notes WHERE path=?", (rel,)
                ).fetchone()
                if now is None:
                    if row is not None:
                        removed.append(row[0])
                elif row is None or tuple(row[1:]) != (now.mtime_ns, now.size):
                    changed.append(now)
            if removed:
                with _transaction(conn):
                    self._delete(conn, removed)
                self._generation += 1
            if changed:
                self._verdicts.forget(f.rel for f in changed)
                self._index_files(conn, changed)
