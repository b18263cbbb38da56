"""The session store: every conversation in one SQLite file in the data dir.

Each turn is one transaction that appends only that turn's messages (pydantic-ai's own
JSON serialisation, one row per message) and updates the session's totals, so a crash or
``kill -9`` mid-turn leaves every earlier turn intact. WAL mode with ``synchronous=NORMAL``:
a committed turn survives the process dying; only a power cut may lose the very last one.

Compaction never deletes: it records a summary that stands in for the first N stored
messages, so ``load`` gives the compacted view the model works from while ``show`` and
``export`` still have the full original. Listing and exporting read raw JSON and never
import pydantic-ai (``co sessions list`` stays fast).
"""

from __future__ import annotations

import builtins
import json
import os
import re
import sqlite3
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from co_core.kernel import paths
from co_core.kernel.errors import CoError
from co_core.kernel.redact import Redactor

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    cwd TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    updated REAL NOT NULL,
    turns INTEGER NOT NULL DEFAULT 0,
    messages INTEGER NOT NULL DEFAULT 0,
    requests INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    source TEXT NOT NULL DEFAULT 'chat'
);
CREATE INDEX IF NOT EXISTS sessions_by_cwd ON sessions (cwd, updated);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS turn_usage (
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, turn)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS compactions (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    replaces INTEGER NOT NULL,
    summary BLOB NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"""

# columns added after the first release: (name, declaration) added to older files in place
ADDED_COLUMNS = [
    ("cost_usd", "REAL NOT NULL DEFAULT 0"),
    ("source", "TEXT NOT NULL DEFAULT 'chat'"),
]
SOURCES = ("chat", "ask")  # where a session was held: ``co chat``, or ``co ask`` (scripts)

TITLE_LENGTH = 60
_ID = re.compile(r"^[0-9a-f]{1,32}$")


class SessionNotFound(CoError):
    """No session matches the given id or prefix."""


def store_path() -> Path:
    return paths.data_dir() / "sessions.db"


def new_id() -> str:
    return uuid.uuid4().hex[:12]


@dataclass
class SessionInfo:
    """One session's row: what ``co sessions list`` shows."""

    id: str
    title: str = ""
    model: str = ""
    cwd: str = ""
    created: float = field(default_factory=time.time)
    updated: float = 0.0
    turns: int = 0
    messages: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0  # the priced turns' cost; turns without a known price add nothing
    source: str = "chat"  # "ask": from ``co ask`` (kept apart: ``--continue`` skips it)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Usage:
    """What one turn cost; added to the session's totals."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @classmethod
    def of(cls, usage: Any) -> Usage:
        """From a pydantic-ai ``RunUsage``, a dict, or None."""
        if usage is None:
            return cls()
        get = usage.get if isinstance(usage, dict) else lambda k, d=0: getattr(usage, k, d)
        return cls(
            int(get("requests", 0) or 0),
            int(get("input_tokens", 0) or 0),
            int(get("output_tokens", 0) or 0),
        )


def title_from(messages: Sequence[Any]) -> str:
    """The first user prompt, on one line, cut to ``TITLE_LENGTH`` characters."""
    for message in messages:
        for part in getattr(message, "parts", ()):
            if getattr(part, "part_kind", "") == "user-prompt":
                content = part.content
                text = (
                    content
                    if isinstance(content, str)
                    else " ".join(c for c in content if isinstance(c, str))
                )
                text = " ".join(text.split())
                if text:
                    return text if len(text) <= TITLE_LENGTH else text[: TITLE_LENGTH - 1] + "…"
    return ""


def dump_messages(messages: Sequence[Any], redactor: Redactor | None = None) -> list[bytes]:
    """Each message as its own JSON object (pydantic-ai's ``ModelMessagesTypeAdapter``),
    with secrets masked the way the audit trail masks them (``co_core.kernel.redact``):
    what is on disk never holds a token the user pasted or a tool printed."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    redactor = redactor or Redactor()
    rows = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
    return [json.dumps(_masked(row, redactor), separators=(",", ":")).encode() for row in rows]


def _masked(node: Any, redactor: Redactor) -> Any:
    """Every string masked; a tool call's arguments as the audit trail masks them (values
    under secret-sounding names too); binary content (images) left whole."""
    if isinstance(node, str):
        return redactor.text(node)
    if isinstance(node, list):
        return [_masked(item, redactor) for item in node]
    if not isinstance(node, dict) or node.get("kind") == "binary":
        return node
    out = {key: _masked(value, redactor) for key, value in node.items()}
    if node.get("part_kind") == "tool-call":
        args = node.get("args")
        if isinstance(args, str):
            try:
                out["args"] = json.dumps(redactor.value(json.loads(args)))
            except ValueError:
                out["args"] = redactor.text(args)
        elif isinstance(args, dict):
            out["args"] = redactor.value(args)
    return out


def parse_messages(rows: Sequence[bytes]) -> list[Any]:
    """The messages back, validated in one call (a JSON array built from the rows)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return ModelMessagesTypeAdapter.validate_json(b"[" + b",".join(rows) + b"]")


def new_session(
    *, cwd: Path | str | None = None, model: str = "", source: str = "chat"
) -> SessionInfo:
    """A session not yet on disk: it is written with its first turn (no empty sessions)."""
    where = str(Path(cwd or Path.cwd()).resolve())
    return SessionInfo(new_id(), model=model, cwd=where, source=source)


class SessionStore:
    """The SQLite file holding all sessions. Cheap to open; one connection per store."""

    def __init__(self, path: Path | None = None, redactor: Redactor | None = None) -> None:
        self.path = path or store_path()
        self.redactor = redactor or Redactor()  # secrets are masked before they are stored
        paths.ensure_dir(self.path.parent)
        fresh = not self.path.exists()
        try:
            self.db = sqlite3.connect(
                self.path, isolation_level=None, timeout=10, check_same_thread=False
            )
            if fresh:
                os.chmod(self.path, 0o600)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA secure_delete=ON")  # deleted sessions are overwritten
            self.db.executescript(SCHEMA)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise CoError(f"session store {self.path}: {exc}") from exc

    def _migrate(self) -> None:
        """Add columns an older store lacks (never drop anything)."""
        found = {row[1] for row in self.db.execute("PRAGMA table_info(sessions)")}
        for name, declaration in ADDED_COLUMNS:
            if name not in found:
                self.db.execute(f"ALTER TABLE sessions ADD COLUMN {name} {declaration}")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- writing ------------------------------------------------------------------------

    def new_session(
        self, *, cwd: Path | str | None = None, model: str = "", source: str = "chat"
    ) -> SessionInfo:
        return new_session(cwd=cwd, model=model, source=source)

    def save_turn(
        self,
        session: SessionInfo,
        messages: Sequence[Any],
        usage: Any = None,
        spent: Any = None,
    ) -> SessionInfo:
        """Append one turn's new messages and add its usage, in one transaction.

        ``spent`` is the turn's ``co_core.telemetry.usage.TurnUsage`` (anything with ``as_dict()``,
        or a dict): kept per turn so a resumed session's ``/cost`` goes on from its totals,
        and its ``cost_usd`` is added to the session's."""
        blobs = dump_messages(messages, self.redactor)
        cost = Usage.of(usage)
        spent_row = spent.as_dict() if hasattr(spent, "as_dict") else spent
        dollars = float((spent_row or {}).get("cost_usd") or 0)
        now = time.time()
        with self._transaction() as db:
            row = db.execute(
                "SELECT messages, turns FROM sessions WHERE id = ?", (session.id,)
            ).fetchone()
            if row is None:
                session.title = session.title or self.redactor.text(title_from(messages))
                session.created = session.created or now
                db.execute(
                    "INSERT INTO sessions (id, title, model, cwd, created, updated, source)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        session.id,
                        session.title,
                        session.model,
                        session.cwd,
                        session.created,
                        now,
                        session.source,
                    ),
                )
                start, turn = 0, 0
            else:
                start, turn = row
            db.executemany(
                "INSERT INTO messages (session_id, seq, turn, data) VALUES (?, ?, ?, ?)",
                [(session.id, start + i, turn, blob) for i, blob in enumerate(blobs)],
            )
            if spent_row is not None:
                db.execute(
                    "INSERT OR REPLACE INTO turn_usage (session_id, turn, data) VALUES (?, ?, ?)",
                    (session.id, turn, json.dumps(spent_row, default=str)),
                )
            db.execute(
                "UPDATE sessions SET updated = ?, turns = turns + 1, messages = messages + ?,"
                " requests = requests + ?, input_tokens = input_tokens + ?,"
                " output_tokens = output_tokens + ?, cost_usd = cost_usd + ?,"
                " model = CASE WHEN ? != '' THEN ? ELSE model END,"
                # a co ask session continued in the chat is a chat from then on
                " source = CASE WHEN ? = 'chat' THEN 'chat' ELSE source END"
                " WHERE id = ?",
                (
                    now,
                    len(blobs),
                    cost.requests,
                    cost.input_tokens,
                    cost.output_tokens,
                    dollars,
                    session.model,
                    session.model,
                    session.source,
                    session.id,
                ),
            )
        fresh = self.get(session.id)
        for key, value in fresh.as_dict().items():
            setattr(session, key, value)
        return session

    def save_compaction(self, session_id: str, summary: Sequence[Any], replaced: int) -> None:
        """Record that ``summary`` now stands in for the first ``replaced`` messages of the
        current view (as ``load`` returns it). The original messages stay in the store."""
        with self._transaction() as db:
            previous = db.execute(
                "SELECT replaces, summary FROM compactions WHERE session_id = ?"
                " ORDER BY seq DESC LIMIT 1",
                (session_id,),
            ).fetchone()
            before, old_summary = (
                (previous[0], len(json.loads(previous[1]))) if previous else (0, 0)
            )
            if replaced < old_summary:
                raise CoError("a compaction must replace at least the previous summary")
            replaces = before + (replaced - old_summary)
            total = db.execute(
                "SELECT messages FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if total is None:
                raise SessionNotFound(f"no session {session_id}")
            if replaces > total[0]:
                raise CoError("a compaction cannot replace messages that were never saved")
            count = db.execute(
                "SELECT COUNT(*) FROM compactions WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            db.execute(
                "INSERT INTO compactions (session_id, seq, replaces, summary, created)"
                " VALUES (?, ?, ?, ?, ?)",
                (
                    session_id,
                    count,
                    replaces,
                    b"[" + b",".join(dump_messages(summary, self.redactor)) + b"]",
                    time.time(),
                ),
            )

    def delete(self, session_id: str) -> None:
        with self._transaction() as db:
            for table, key in (
                ("messages", "session_id"),
                ("compactions", "session_id"),
                ("turn_usage", "session_id"),
            ):
                db.execute(f"DELETE FROM {table} WHERE {key} = ?", (session_id,))
            db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # and gone from the WAL too

    # -- reading ------------------------------------------------------------------------

    def _info(self, row: Sequence[Any]) -> SessionInfo:
        return SessionInfo(*row)

    _COLUMNS = (
        "id, title, model, cwd, created, updated, turns, messages, requests,"
        " input_tokens, output_tokens, cost_usd, source"
    )

    def turn_usage(self, session_id: str) -> builtins.list[dict[str, Any]]:
        """Each saved turn's usage (``TurnUsage.as_dict()``), oldest first."""
        rows = self.db.execute(
            "SELECT data FROM turn_usage WHERE session_id = ? ORDER BY turn", (session_id,)
        )
        return [json.loads(r[0]) for r in rows]

    def list(
        self,
        *,
        cwd: Path | str | None = None,
        limit: int | None = None,
        source: str | None = None,
    ) -> builtins.list[SessionInfo]:
        """Sessions, most recently updated first (only those of ``cwd``, or of ``source``
        ("chat", "ask"), if given)."""
        sql = f"SELECT {self._COLUMNS} FROM sessions"
        where: builtins.list[str] = []
        args: builtins.list[Any] = []
        if cwd is not None:
            where.append("cwd = ?")
            args.append(str(Path(cwd).resolve()))
        if source is not None:
            where.append("source = ?")
            args.append(source)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated DESC, rowid DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        return [self._info(r) for r in self.db.execute(sql, args)]

    def latest(self, cwd: Path | str | None = None, source: str = "chat") -> SessionInfo | None:
        """The last chat held in this directory (``co chat --continue``): ``co ask`` runs
        from scripts are left out, so they never bury the conversation."""
        found = self.list(cwd=cwd or Path.cwd(), limit=1, source=source)
        return found[0] if found else None

    def exists(self, session_id: str) -> bool:
        """Whether the session has been written (a new one is, with its first turn)."""
        found = self.db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,))
        return found.fetchone() is not None

    def get(self, session_id: str) -> SessionInfo:
        row = self.db.execute(
            f"SELECT {self._COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {session_id}")
        return self._info(row)

    def resolve(self, prefix: str) -> SessionInfo:
        """The session whose id starts with ``prefix``; a clear error if none or several."""
        text = prefix.strip().lower()
        if not _ID.match(text):
            raise SessionNotFound(
                f"{prefix!r} is not a session id (ids are hex, see `co sessions list`)"
            )
        rows = self.db.execute(
            f"SELECT {self._COLUMNS} FROM sessions WHERE id >= ? AND id < ?"
            " ORDER BY updated DESC LIMIT 6",
            (text, text + "g"),
        ).fetchall()
        if not rows:
            raise SessionNotFound(f"no session {prefix} (see `co sessions list`)")
        exact = [r for r in rows if r[0] == text]
        if exact:
            return self._info(exact[0])
        if len(rows) > 1:
            names = ", ".join(r[0] for r in rows[:5])
            raise SessionNotFound(f"{prefix} is ambiguous: {names}; give more of the id")
        return self._info(rows[0])

    def ids(self, prefix: str = "", limit: int = 50) -> builtins.list[tuple[str, str]]:
        """(id, title) pairs for completion of ``/resume``."""
        text = prefix.strip().lower()
        if text and not _ID.match(text):
            return []
        rows = self.db.execute(
            "SELECT id, title FROM sessions WHERE id >= ? AND id < ? ORDER BY updated DESC LIMIT ?",
            (text, text + "g", limit),
        )
        return [(r[0], r[1]) for r in rows]

    def raw_messages(self, session_id: str) -> builtins.list[bytes]:
        """Every stored message as JSON bytes, the full original (compactions ignored)."""
        rows = self.db.execute(
            "SELECT data FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        return [r[0] for r in rows]

    def original(self, session_id: str) -> builtins.list[Any]:
        """The full stored history as pydantic-ai messages (nothing compacted away)."""
        rows = self.raw_messages(session_id)
        return parse_messages(rows) if rows else []

    def load(self, session_id: str, *, patch: bool = True) -> builtins.list[Any]:
        """The history to continue from: the latest compaction's summary plus every message
        after what it replaces, with dangling tool calls answered."""
        from co_core.sessions.history import patch_dangling

        compaction = self.db.execute(
            "SELECT replaces, summary FROM compactions WHERE session_id = ?"
            " ORDER BY seq DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        replaces, summary = compaction if compaction else (0, b"[]")
        rows = [
            r[0]
            for r in self.db.execute(
                "SELECT data FROM messages WHERE session_id = ? AND seq >= ? ORDER BY seq",
                (session_id, replaces),
            )
        ]
        messages = parse_messages(rows) if rows else []
        if compaction:
            from pydantic_ai.messages import ModelMessagesTypeAdapter

            messages = ModelMessagesTypeAdapter.validate_json(summary) + messages
        return patch_dangling(messages) if patch else messages
