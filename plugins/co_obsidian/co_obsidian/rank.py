"""The order in which the index offers candidates for a search.

First the notes whose title is the query (those whose file name is the query, then
those whose ``title:`` is, then those with it as an alias), then by
BM25 with the title weighted 10×, headings 5×, tags 4×, the text 1×. BM25 costs about a
microsecond per matching note, and for a quoted phrase SQLite checks the word positions
of every note holding all its words once more; so a query matching more than
RANK_ALL_UP_TO notes (a word in most of them, where BM25 cannot tell notes apart anyway),
or with a phrase whose words are together in more notes than that, is not scored: its
title, heading and tag matches come first (by BM25: few notes, and only those columns
are read), then the other matches newest first (note ids follow the order in which the
notes were last modified), read only as far as a page needs.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

from co_obsidian import text as T

RANK = "bm25(fts, 10.0, 5.0, 4.0, 1.0)"  # title, headings, tags, body
RANK_ALL_UP_TO = 2000
_QUOTED = re.compile(r'"([^"]*)"')  # the quoted parts of a MATCH (tokens hold no quotes)
_JOIN = "SELECT n.id, n.path FROM fts JOIN notes n ON n.id = fts.rowid WHERE fts MATCH ?"


def candidates(conn: sqlite3.Connection, query: T.Query, match: str) -> Iterator[str]:
    """Paths of the notes that may match ``query`` (``match``: its FTS5 expression), best
    first; the caller verifies each against the note's text."""
    seen: set[int] = set()
    for note_id, path in conn.execute(
        "SELECT n.id, n.path FROM titles t JOIN notes n ON n.id = t.note_id "
        "WHERE t.key = ? AND n.binary = 0 GROUP BY n.id ORDER BY min(t.kind), length(n.path), n.path",
        (query.title,),
    ).fetchall():
        seen.add(note_id)
        yield path
    for note_id, path in _scored(conn, match):
        if note_id not in seen:
            seen.add(note_id)
            yield path


def _too_common(conn: sqlite3.Connection, match: str) -> bool:
    """Does ``match`` hold in more than RANK_ALL_UP_TO notes? (Counting is cheap.)"""
    (count,) = conn.execute(
        "SELECT count(*) FROM (SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?)",
        (match, RANK_ALL_UP_TO + 1),
    ).fetchone()
    return count > RANK_ALL_UP_TO


def _scored(conn: sqlite3.Connection, match: str) -> Iterator[tuple[int, str]]:
    phrases = [part for part in _QUOTED.findall(match) if " " in part]
    if phrases:
        many = any(
            _too_common(conn, " AND ".join(f'"{word}"' for word in phrase.split()))
            for phrase in phrases
        )
    else:
        many = _too_common(conn, match)
    # rows are read as the caller goes on: it mostly stops after a page
    if not many:
        yield from conn.execute(f"{_JOIN} ORDER BY {RANK}", (match,))
        return
    head = f"{{title headings tags}} : ({match})"
    yield from conn.execute(f"{_JOIN} ORDER BY {RANK}", (head,))
    yield from conn.execute(f"{_JOIN} ORDER BY fts.rowid DESC", (match,))
