"""The vault index: SQLite FTS5 in Co's cache dir, kept in step with the files.

One database per vault (``cache_dir()/obsidian/<hash>.sqlite``). It is built on first
use, then updated incrementally: a note whose mtime or size changed is re-read, a note
that disappeared is dropped. Folder mtimes are checked before every query (cheap, and
they change on every create, rename and delete); a full stat of every note runs when the
last one is older than ``recheck_seconds``. Search results are verified against the
note on disk, so a stale index can miss a fresh edit for a moment but never shows text
that is no longer there. A deleted, corrupt or outdated database is rebuilt.

The FTS table is contentless: a changed note gets a new row id and the old row is left
behind as dead weight (filtered out by the join with ``notes``); when dead rows outnumber
live ones the FTS table is rebuilt.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import operator
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from co_core import span
from co_obsidian import cold, rgscan
from co_obsidian import text as T
from co_obsidian.parse import parse_note
from co_obsidian.progress import BuildProgress
from co_obsidian.vault import (
    FileStat,
    VaultError,
    read_bytes,
    read_text,
    stat_note,
    walk,
    walk_names,
)
from co_obsidian.watch import Watcher

SCHEMA = "5"  # 5: note ids in order of modification
MAX_INDEX_CHARS = 5_000_000  # a huge note is indexed (and searched) up to here
RANK = "bm25(fts, 10.0, 5.0, 4.0, 1.0)"  # title, headings, tags, body
# bm25 costs ~1 us per matching note; past this many matches (a word in most notes, where
# bm25 cannot tell notes apart anyway) title/heading/tag matches come first, then the rest
# newest first. Keeps a search for "the" as fast as one for a rare word. A phrase whose
# words are together in more notes than this is ranked that way too (see _ranked).
RANK_ALL_UP_TO = 2000
_QUOTED = re.compile(r'"([^"]*)"')  # the quoted parts of a MATCH (tokens hold no quotes)
# A vault with more note text than this is not indexed while the user waits: the first
# searches read the notes directly (about as fast as ripgrep) while a background thread
# builds the index. Smaller vaults are indexed at once (well under a second).
BACKGROUND_BUILD_BYTES = 20_000_000
BUILD_DELAY = 0.05  # seconds between answering the first search and starting the build


class _BuildLater(Exception):
    def __init__(self, files: list[FileStat], links: list[str]) -> None:
        self.files = files
        self.links = links


class _Stopped(Exception):
    """Co is exiting: an unfinished build is rolled back."""


_DDL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS notes(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT UNIQUE NOT NULL,
    key TEXT NOT NULL,          -- folded path without .md
    stem_key TEXT NOT NULL,     -- folded file name without .md
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    binary INTEGER NOT NULL DEFAULT 0,
    tags TEXT NOT NULL DEFAULT '',     -- tab separated, tab at both ends
    aliases TEXT NOT NULL DEFAULT '',  -- folded, tab separated, tab at both ends
    fm_error TEXT
);
CREATE INDEX IF NOT EXISTS notes_stem ON notes(stem_key);
CREATE INDEX IF NOT EXISTS notes_key ON notes(key);
CREATE TABLE IF NOT EXISTS links(src INTEGER NOT NULL, target TEXT NOT NULL, raw TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS links_src ON links(src);
CREATE INDEX IF NOT EXISTS links_target ON links(target);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, headings, tags, body,
    content='', detail=full, tokenize='unicode61 remove_diacritics 2'
);
"""


def link_key(target: str) -> str:
    target = target.strip()
    if target.lower().endswith(".md"):
        target = target[:-3]
    return T.fold(target.strip("/"))


@dataclass
class Hit:
    path: str
    text: str


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
        self._conn: sqlite3.Connection | None = None
        self._db_ino: int | None = None
        self._dirs: dict[str, int] = {}
        self._symlinks: list[str] = []  # symlinked notes, as of the last walk
        self._checked_at = float("-inf")
        self._known: dict[str, tuple[int, int, int]] | None = None
        self._builder: threading.Thread | None = None
        self._in_builder = False  # set while the background thread builds (no progress bar)
        self._stopping = False
        self._watcher = Watcher(str(root))
        self.last_refresh: dict[str, int] = {}

    # -- database lifecycle -------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        from co_core import ensure_dir

        ensure_dir(self.db_path.parent)
        conn = sqlite3.connect(self.db_path, check_same_thread=False, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout=5000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            version = None
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone():
                row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
                version = row[0] if row else None
            if version != SCHEMA:
                for (name,) in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'fts_%'"
                    " AND name NOT LIKE 'sqlite_%'"
                ).fetchall():
                    conn.execute(f'DROP TABLE IF EXISTS "{name}"')
                conn.executescript(_DDL)
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA,))
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('vault', ?)", (str(self.root),))
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('dead', '0')")
        except sqlite3.DatabaseError:
            conn.close()
            raise
        os.chmod(self.db_path, 0o600)
        self._db_ino = os.stat(self.db_path).st_ino
        self._checked_at = float("-inf")
        self._known = None
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
        self._stopping = True
        builder = self._builder
        if builder is not None:
            builder.join(timeout=30)
        with self._lock:
            self._watcher.close()
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _guarded(self, work, *args, later: bool = False):  # type: ignore[no-untyped-def]
        """Run ``work(conn, ...)`` fresh; a corrupt database is deleted and rebuilt once.
        With ``later``, a large unindexed vault raises _BuildLater instead of building."""
        with self._lock:
            if not self.root.is_dir():
                raise VaultError(f"Obsidian vault {self.root} is gone.")
            try:
                conn = self._connection()
                self._refresh(conn, later)
                return work(conn, *args)
            except sqlite3.DatabaseError:
                self._discard()
                conn = self._connection()
                self._refresh(conn, later)
                return work(conn, *args)

    def building(self) -> bool:
        """True while the background thread builds the first index."""
        return self._builder is not None and self._builder.is_alive()

    def _start_builder(self) -> None:
        def build() -> None:
            # a moment's head start for the answer just found: formatting it should not
            # share the interpreter with the build
            time.sleep(BUILD_DELAY)
            if self._stopping:
                return
            self._in_builder = True
            try:
                self._guarded(lambda conn: None)
            except Exception:
                pass  # stopped, or the vault vanished: the next search tries again
            finally:
                self._in_builder = False

        if not self.building() and not self._stopping:
            self._builder = threading.Thread(target=build, name="co-obsidian-index", daemon=True)
            self._builder.start()

    # -- keeping in step with the files -------------------------------------------------

    def _dirs_changed(self) -> bool:
        for rel, mtime in self._dirs.items():
            try:
                if os.stat(self.root / rel if rel else self.root).st_mtime_ns != mtime:
                    return True
            except OSError:
                return True
        return False

    def _scan(self) -> dict[str, FileStat]:
        dirs: dict[str, int] = {}
        links: list[str] = []
        found = {f.rel: f for f in walk(self.root, dirs, links)}
        self._dirs = dirs
        self._symlinks = links
        self._watcher.start(sorted(dirs))
        if self._watcher.active and self._dirs_changed():
            self._watcher.close()  # changed while we looked: poll until the next full scan
        return found

    def _full_check_due(self, now: float) -> bool:
        """Stat every note now? With change notifications, only as a safety net (every
        minute, or always when ``recheck_seconds`` is 0); without, every recheck_seconds."""
        interval = self.recheck_seconds
        if self._watcher.active and interval > 0:
            interval = max(interval, 60.0)
        return now - self._checked_at >= interval

    def refresh(self, force: bool = False) -> dict[str, int]:
        """Bring the index up to date now; returns counts of added/changed/removed notes."""
        with self._lock:
            if force:
                self._checked_at = float("-inf")
            return self._guarded(lambda conn: self.last_refresh)

    def _refresh(self, conn: sqlite3.Connection, later: bool = False) -> None:
        self.last_refresh = {"added": 0, "changed": 0, "removed": 0}
        if not self._full_check_due(time.monotonic()):
            if self._watcher.active:
                paths, rescan = self._watcher.changes()
                if not rescan:
                    if paths:
                        self._refresh_paths(conn, paths)
                    return
            elif not self._dirs_changed():
                return
        on_disk = self._scan()
        if self._known is None:
            self._known = {
                path: (note_id, mtime, size)
                for note_id, path, mtime, size in conn.execute(
                    "SELECT id, path, mtime_ns, size FROM notes"
                )
            }
        known = self._known
        if later and not known and sum(f.size for f in on_disk.values()) > BACKGROUND_BUILD_BYTES:
            self._checked_at = float("-inf")
            raise _BuildLater(list(on_disk.values()), self._symlinks)
        removed = [known[p][0] for p in known.keys() - on_disk.keys()]
        changed = [
            f
            for rel, f in on_disk.items()
            if rel not in known or known[rel][1:] != (f.mtime_ns, f.size)
        ]
        added = sum(1 for f in changed if f.rel not in known)
        stale = removed + [known[f.rel][0] for f in changed if f.rel in known]
        self.last_refresh = {
            "added": added,
            "changed": len(changed) - added,
            "removed": len(removed),
        }
        if stale or changed:
            dead = int(conn.execute("SELECT value FROM meta WHERE key='dead'").fetchone()[0])
            live = conn.execute("SELECT count(*) FROM notes").fetchone()[0]
            self._known = None  # reread after the change (or a failed one)
            if dead + len(stale) > max(500, live):
                self._rebuild(conn, list(on_disk.values()))
            else:
                self._apply(conn, stale, changed, dead + len(stale))
        self._checked_at = time.monotonic()

    def _refresh_paths(self, conn: sqlite3.Connection, paths: set[str]) -> None:
        """Look again at these notes only (the watcher named them)."""
        if self._known is None:
            self._known = {
                path: (note_id, mtime, size)
                for note_id, path, mtime, size in conn.execute(
                    "SELECT id, path, mtime_ns, size FROM notes"
                )
            }
        known = self._known
        stale: list[int] = []
        changed: list[FileStat] = []
        for rel in paths:
            now, before = stat_note(self.root, rel), known.get(rel)
            if now is None:
                if before is not None:
                    stale.append(before[0])
            elif before is None:
                changed.append(now)
            elif before[1:] != (now.mtime_ns, now.size):
                stale.append(before[0])
                changed.append(now)
        if stale or changed:
            self._known = None  # until the change is in
            dead = int(conn.execute("SELECT value FROM meta WHERE key='dead'").fetchone()[0])
            self._apply(conn, stale, changed, dead + len(stale))
            for rel in paths:
                known.pop(rel, None)
            marks = ",".join("?" * len(changed))
            for note_id, path, mtime, size in conn.execute(
                f"SELECT id, path, mtime_ns, size FROM notes WHERE path IN ({marks})",
                [f.rel for f in changed],
            ):
                known[path] = (note_id, mtime, size)
            self._known = known
            self.last_refresh = {
                "added": sum(1 for f in changed if f.rel not in known),
                "changed": sum(1 for f in changed if f.rel in known),
                "removed": len(stale) - sum(1 for f in changed if f.rel in known),
            }

    def _rebuild(self, conn: sqlite3.Connection, files: list[FileStat]) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("DELETE FROM notes")
            conn.execute("DELETE FROM links")
            conn.execute("INSERT INTO fts(fts) VALUES ('delete-all')")
            self._index_files(conn, files)
            conn.execute("UPDATE meta SET value='0' WHERE key='dead'")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _apply(
        self, conn: sqlite3.Connection, stale: list[int], changed: list[FileStat], dead: int
    ) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for start in range(0, len(stale), 500):
                chunk = stale[start : start + 500]
                marks = ",".join("?" * len(chunk))
                conn.execute(f"DELETE FROM notes WHERE id IN ({marks})", chunk)
                conn.execute(f"DELETE FROM links WHERE src IN ({marks})", chunk)
            self._index_files(conn, changed)
            conn.execute("UPDATE meta SET value=? WHERE key='dead'", (str(dead),))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _index_files(self, conn: sqlite3.Connection, files: list[FileStat]) -> None:
        """Parse and insert ``files`` (every write to the index goes through here, traced)."""
        if not files:
            return
        with span("co.index.build", notes=len(files)):
            self._insert_files(conn, files)

    def _insert_files(self, conn: sqlite3.Connection, files: list[FileStat]) -> None:
        # ids in order of modification: a search that matches too many notes to score
        # lists the rest by descending id, newest first (see _ranked)
        files = sorted(files, key=operator.attrgetter("mtime_ns", "rel"))
        progress = BuildProgress(len(files), show=not self._in_builder)
        try:
            notes_rows, fts_rows, link_rows = [], [], []
            next_id = (
                conn.execute("SELECT seq FROM sqlite_sequence WHERE name='notes'").fetchone()
                or (0,)
            )[0]
            for count, f in enumerate(files, 1):
                if self._stopping and count % 100 == 0:
                    raise _Stopped
                next_id += 1
                notes_rows_fts = self._note_rows(next_id, f)
                notes_rows.append(notes_rows_fts[0])
                if notes_rows_fts[1] is not None:
                    fts_rows.append(notes_rows_fts[1])
                link_rows += notes_rows_fts[2]
                if count % 500 == 0 or count == len(files):
                    self._flush(conn, notes_rows, fts_rows, link_rows)
                    notes_rows, fts_rows, link_rows = [], [], []
                    progress.advance(500 if count % 500 == 0 else count % 500)
        finally:
            progress.close()

    @staticmethod
    def _flush(conn: sqlite3.Connection, notes_rows: list, fts_rows: list, link_rows: list) -> None:  # type: ignore[type-arg]
        conn.executemany("INSERT INTO notes VALUES (?,?,?,?,?,?,?,?,?,?)", notes_rows)
        conn.executemany(
            "INSERT INTO fts(rowid, title, headings, tags, body) VALUES (?,?,?,?,?)", fts_rows
        )
        conn.executemany("INSERT INTO links VALUES (?,?,?)", link_rows)

    def _note_rows(self, note_id: int, f: FileStat) -> tuple:  # type: ignore[type-arg]
        key = f.rel[: -len(".md")]
        stem = key.rpartition("/")[2]
        base = (note_id, f.rel, T.fold(key), T.fold(stem), f.mtime_ns, f.size)
        text = read_text(self.root / f.rel, MAX_INDEX_CHARS * 4)
        if text is None:
            return (*base, 1, "", "", None), None, []
        text = text[:MAX_INDEX_CHARS]
        note = parse_note(text, stem)
        tags = "\t" + "\t".join(note.tags) + "\t" if note.tags else ""
        aliases = "\t" + "\t".join(T.fold(a) for a in note.aliases) + "\t" if note.aliases else ""
        title = " ".join(dict.fromkeys([stem, note.title, *note.aliases]))
        fts = (
            note_id,
            T.shadow(title),
            T.shadow("\n".join(note.headings)),
            T.shadow(" ".join(note.tags)),
            T.shadow(text),
        )
        links = [(note_id, link_key(link), link) for link in note.links]
        return (*base, 0, tags, aliases, note.frontmatter_error), fts, links

    # -- queries --------------------------------------------------------------------------

    def search(self, query: T.Query, offset: int, limit: int) -> tuple[list[Hit], bool]:
        """Verified hits ``offset .. offset+limit`` in rank order, and whether more exist."""
        if self.building() or not self.db_path.exists():
            rg = rgscan.executable()
            found = None if rg is None else self._unindexed_search(rg, query, offset, limit)
            if found is not None:
                return found
        if self.building():  # and rg is missing or failed
            links: list[str] = []
            files = list(walk(self.root, links=links))
            return self._scan_search(files, query, offset, limit, links)
        try:
            return self._guarded(self._search, query, offset, limit, later=True)
        except _BuildLater as build_later:
            found = self._scan_search(build_later.files, query, offset, limit, build_later.links)
            self._start_builder()
            return found

    def _unindexed_search(
        self, rg: str, query: T.Query, offset: int, limit: int
    ) -> tuple[list[Hit], bool] | None:
        """No index yet, or it is being built: answer with rg reading the notes (only
        their names are listed, nothing is stat-ed or parsed), then build the index in
        the background. None when the vault is small enough to index at once, or rg
        failed: the caller takes the usual way."""
        # rg starts on the rarest-looking term (judged by the first notes found), then
        # reads the vault while Python lists it
        order = [0]
        if len(query.terms) > 1:
            peek = cold.sample(walk_names(self.root, limit=cold.SAMPLE), [])
            order = cold.rarity_order(self.root, cold.sizes(self.root, peek), query)
        first = rgscan.start(rg, str(self.root), query.terms[order[0]])
        try:
            links: list[str] = []
            names = walk_names(self.root, links)
            sampled = cold.sizes(self.root, cold.sample(names, links))
            average = sum(sampled.values()) / len(sampled) if sampled else 0.0
            if not self.building() and average * len(names) <= BACKGROUND_BUILD_BYTES:
                return None  # small: the caller indexes it now
            ranked = cold.rank(
                rg, self.root, names, links, query, sampled, max(1.0, average), (order, first)
            )
        finally:
            first.cancel()
        if ranked is None:
            return None
        found = self._verified_page(ranked, query.patterns, offset, limit)
        self._start_builder()
        return found

    def _scan_search(
        self,
        files: list[FileStat],
        query: T.Query,
        offset: int,
        limit: int,
        links: list[str] | None = None,
    ) -> tuple[list[Hit], bool]:
        """Search the listed notes without the index: with ``rg`` as prefilter when it is
        installed (see :mod:`co_obsidian.cold`), else by reading every note."""
        rg = rgscan.executable()
        if rg is not None:
            if links is None:
                links = [f.rel for f in files if os.path.islink(os.path.join(self.root, f.rel))]
            known = {f.rel: f.size for f in files}
            average = max(1.0, sum(known.values()) / max(1, len(known)))
            ranked = cold.rank(
                rg,
                self.root,
                list(known),
                links,
                query,
                cold.sizes(self.root, cold.sample(list(known), links)),
                average,
                known_sizes=known,
            )
            if ranked is not None:
                return self._verified_page(ranked, query.patterns, offset, limit)
        return self._read_search(files, query, offset, limit)

    def _read_search(
        self, files: list[FileStat], query: T.Query, offset: int, limit: int
    ) -> tuple[list[Hit], bool]:
        """Search by reading every note (no index and no rg)."""
        patterns = query.patterns
        prefilter = T.Prefilter(query)
        scored: list[tuple[float, str]] = []
        average = max(1.0, sum(f.size for f in files) / max(1, len(files)))
        root = f"{self.root}{os.sep}"
        for f in files:
            data = read_bytes(root + f.rel, f.size, MAX_INDEX_CHARS * 4)
            if data is None:
                continue
            stem = f.rel[:-3].rpartition("/")[2]
            if not prefilter.may_match(stem.encode("utf-8", "surrogateescape") + b"\n" + data):
                continue
            text = data.decode("utf-8", "replace")[:MAX_INDEX_CHARS]
            if not T.matches_note(stem, text, patterns):
                continue
            length = 0.5 + 0.5 * len(text) / average
            score = 0.0
            for pattern in patterns:
                first = pattern.search(text)
                # a match on a heading line counts like a heading match in the index
                heading = first is not None and text.startswith(
                    "#", text.rfind("\n", 0, first.start()) + 1
                )
                score += 10 * bool(pattern.search(stem)) + 5 * heading
                score += (
                    math.log1p(sum(1 for _ in itertools.islice(pattern.finditer(text), 20)))
                    / length
                )
            scored.append((-score, f.rel))
        scored.sort()
        hits = []
        for _score, rel in scored[offset : offset + limit]:
            text = read_text(self.root / rel, MAX_INDEX_CHARS * 4)
            if text is not None:
                hits.append(Hit(rel, text[:MAX_INDEX_CHARS]))
        return hits, len(scored) > offset + limit

    def _search(
        self, conn: sqlite3.Connection, query: T.Query, offset: int, limit: int
    ) -> tuple[list[Hit], bool]:
        patterns = query.patterns
        match = query.fts()
        if match is None:
            rows: Iterator[tuple[int, str]] = conn.execute(
                "SELECT id, path FROM notes WHERE binary=0 ORDER BY path"
            )
        else:
            try:
                rows = self._ranked(conn, match)
            except sqlite3.OperationalError as exc:  # an FTS5 syntax error is our bug
                raise VaultError(f"search failed: {exc}") from exc
        paths = (path for _note_id, path in (list(rows) if match is None else rows))
        return self._verified_page(paths, patterns, offset, limit)

    def _verified_page(
        self, paths: Iterable[str], patterns: list[re.Pattern[str]], offset: int, limit: int
    ) -> tuple[list[Hit], bool]:
        """Read candidates in order, keep those whose text really matches, return one page.

        Whatever found the candidates (rg, the index), a hit is only shown once the note's
        current text matches; a note gone or binary since is skipped (a refresh drops it).
        """
        hits: list[Hit] = []
        skipped = 0
        for path in paths:
            text = read_text(self.root / path, MAX_INDEX_CHARS * 4)
            if text is None:
                continue
            text = text[:MAX_INDEX_CHARS]
            if not T.matches_note(path[:-3].rpartition("/")[2], text, patterns):
                continue
            if skipped < offset:
                skipped += 1
                continue
            if len(hits) == limit:
                return hits, True
            hits.append(Hit(path, text))
        return hits, False

    @staticmethod
    def _ranked(conn: sqlite3.Connection, match: str) -> Iterator[tuple[int, str]]:
        join = "SELECT n.id, n.path FROM fts JOIN notes n ON n.id = fts.rowid WHERE fts MATCH ?"
        phrases = [part for part in _QUOTED.findall(match) if " " in part]
        if phrases:  # phrases of several words
            # BM25 finds each phrase's matches once more (for its idf), checking the word
            # positions of every note holding all its words: for common words that is
            # most of the search. Such a phrase is not scored (see below).
            if not any(VaultIndex._common_words(conn, phrase) for phrase in phrases):
                cursor = conn.execute(f"SELECT rowid, {RANK} FROM fts WHERE fts MATCH ?", (match,))
                rows = cursor.fetchmany(RANK_ALL_UP_TO + 1)
                cursor.close()
                if len(rows) <= RANK_ALL_UP_TO:
                    rows.sort(key=operator.itemgetter(1, 0))
                    ids = [note_id for note_id, _score in rows]
                    yield from VaultIndex._with_paths(conn, ids)
                    return
        else:  # counting a word's notes is cheap, scoring each is not
            many = conn.execute(
                "SELECT count(*) FROM (SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?)",
                (match, RANK_ALL_UP_TO + 1),
            ).fetchone()[0]
            if many <= RANK_ALL_UP_TO:
                yield from conn.execute(f"{join} ORDER BY {RANK}", (match,))
                return
        # Too many to score: title, heading and tag matches first (by BM25: few notes, and
        # only those columns' positions are read), then the rest newest first. Notes get
        # ids in the order they were (re)indexed, oldest modification first, so this
        # streams: reading stops once a page is found.
        head = f"{{title headings tags}} : ({match})"
        # scoring costs a second pass over those columns: only worth it for two or more
        first_two = conn.execute("SELECT rowid FROM fts WHERE fts MATCH ? LIMIT 2", (head,))
        ids = [note_id for (note_id,) in first_two]
        seen = set()
        for note_id, path in (
            conn.execute(f"{join} ORDER BY {RANK}", (head,))
            if len(ids) > 1
            else VaultIndex._with_paths(conn, ids)
        ):
            seen.add(note_id)
            yield note_id, path
        for note_id, path in conn.execute(f"{join} ORDER BY fts.rowid DESC", (match,)):
            if note_id not in seen:
                yield note_id, path

    @staticmethod
    def _common_words(conn: sqlite3.Connection, phrase: str) -> bool:
        """Do the words of this phrase occur together in more than RANK_ALL_UP_TO notes?"""
        words = " AND ".join(f'"{word}"' for word in phrase.split())
        return (
            conn.execute(
                "SELECT count(*) FROM (SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?)",
                (words, RANK_ALL_UP_TO + 1),
            ).fetchone()[0]
            > RANK_ALL_UP_TO
        )

    @staticmethod
    def _with_paths(conn: sqlite3.Connection, ids: list[int]) -> Iterator[tuple[int, str]]:
        """(id, path) in the order of ``ids``, looked up as the caller reads on (it mostly
        stops after a page); ids of notes changed or deleted since are skipped."""
        for start in range(0, len(ids), 64):
            chunk = ids[start : start + 64]
            marks = ",".join("?" * len(chunk))
            paths = dict(conn.execute(f"SELECT id, path FROM notes WHERE id IN ({marks})", chunk))
            yield from ((note_id, paths[note_id]) for note_id in chunk if note_id in paths)

    def notes(
        self, tag: str | None, folder: str | None, offset: int, limit: int
    ) -> tuple[list[tuple[str, str]], int]:
        """(path, tags) of notes with ``tag`` (nested tags included) in ``folder``; and the total."""
        return self._guarded(self._notes, tag, folder, offset, limit)

    def _notes(self, conn, tag, folder, offset, limit):  # type: ignore[no-untyped-def]
        where, args = ["binary=0"], []
        if tag:
            where.append("(instr(tags, ?) > 0 OR instr(tags, ?) > 0)")
            args += [f"\t{tag}\t", f"\t{tag}/"]
        if folder:
            where.append("substr(path, 1, ?) = ?")
            args += [len(folder) + 1, folder + "/"]
        clause = " AND ".join(where)
        total = conn.execute(f"SELECT count(*) FROM notes WHERE {clause}", args).fetchone()[0]
        rows = conn.execute(
            f"SELECT path, tags FROM notes WHERE {clause} ORDER BY path LIMIT ? OFFSET ?",
            [*args, limit, offset],
        ).fetchall()
        return [(p, t.strip("\t").replace("\t", ", ")) for p, t in rows], total

    def find(self, name: str) -> list[str]:
        """Paths of notes a wikilink ``[[name]]`` could mean: path, file name or alias."""
        key = link_key(name)
        return self._guarded(
            lambda conn: [
                p
                for (p,) in conn.execute(
                    "SELECT path FROM notes WHERE binary=0 AND (key=? OR stem_key=? "
                    "OR instr(aliases, ?) > 0) ORDER BY key=? DESC, length(path), path",
                    (key, key, f"\t{key}\t", key),
                )
            ]
        )

    def links(self, path: str) -> tuple[list[tuple[str, str | None]], list[str]]:
        """Outgoing links (as written, and the note they resolve to) and backlinking notes."""
        return self._guarded(self._links, path)

    def _links(self, conn, path):  # type: ignore[no-untyped-def]
        row = conn.execute("SELECT id, key, stem_key FROM notes WHERE path=?", (path,)).fetchone()
        if row is None:
            return [], []
        note_id, key, stem_key = row
        outgoing = []
        for raw, target in conn.execute("SELECT raw, target FROM links WHERE src=?", (note_id,)):
            found = conn.execute(
                "SELECT path FROM notes WHERE key=? OR stem_key=? ORDER BY key=? DESC, length(path) LIMIT 1",
                (target, target, target),
            ).fetchone()
            outgoing.append((raw, found[0] if found else None))
        back = [
            p
            for (p,) in conn.execute(
                "SELECT DISTINCT n.path FROM links l JOIN notes n ON n.id = l.src "
                "WHERE (l.target=? OR l.target=?) AND n.id != ? ORDER BY n.path",
                (key, stem_key, note_id),
            )
        ]
        return outgoing, back

    def count(self) -> int:
        return self._guarded(
            lambda conn: conn.execute("SELECT count(*) FROM notes WHERE binary=0").fetchone()[0]
        )

    def note_changed(self, path: Path) -> None:
        """A tool wrote ``path``: look again on the next query."""
        with self._lock:
            self._checked_at = float("-inf")
