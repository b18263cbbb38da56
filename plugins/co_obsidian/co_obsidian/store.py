"""What the index holds: its tables, and the rows of one note.

A note is a row in ``notes`` (path, file name as Obsidian compares names, mtime, size,
whether it is a symlink, tags), its text in the contentless FTS5 table ``fts`` (as :func:`co_obsidian.text.shadow`
writes it: title, headings, tags, body), its titles as a search compares them (file
name, ``title:``, aliases), its aliases as Obsidian compares names, and its links as
written (resolved when asked for: which file a link leads to depends on the other
notes). Attachments are listed by path and file name, for links.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from co_obsidian import text as T
from co_obsidian.parse import parse_note
from co_obsidian.vault import FileStat, read_text, stem

SCHEMA = "7"  # 7: notes read by a CommonMark parser; titles say what they are
MAX_INDEX_CHARS = 5_000_000  # a huge note is indexed (and searched) up to here

DDL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS notes(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT UNIQUE NOT NULL,
    name_key TEXT NOT NULL,     -- the file name as Obsidian compares it (NFC, lower case)
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    link INTEGER NOT NULL DEFAULT 0,   -- a symlink: its target is checked too
    binary INTEGER NOT NULL DEFAULT 0,
    tags TEXT NOT NULL DEFAULT '',     -- tab separated, tab at both ends
    fm_error TEXT
);
CREATE INDEX IF NOT EXISTS notes_name ON notes(name_key);
CREATE TABLE IF NOT EXISTS titles(  -- file name, title: and aliases, folded as a search folds
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE, key TEXT NOT NULL,
    kind INTEGER NOT NULL);  -- 0 file name, 1 title:, 2 alias (a search ranks them so)
CREATE INDEX IF NOT EXISTS titles_key ON titles(key);
CREATE INDEX IF NOT EXISTS titles_note ON titles(note_id);
CREATE TABLE IF NOT EXISTS aliases(  -- aliases as Obsidian compares names
    note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE, key TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS aliases_key ON aliases(key);
CREATE INDEX IF NOT EXISTS aliases_note ON aliases(note_id);
CREATE TABLE IF NOT EXISTS links(
    src INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
    raw TEXT NOT NULL,       -- as written
    path TEXT NOT NULL,      -- the part naming a file
    name TEXT NOT NULL,      -- its last part, NFC, lower case (finds backlink candidates)
    embed INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS links_src ON links(src);
CREATE INDEX IF NOT EXISTS links_name ON links(name);
CREATE TABLE IF NOT EXISTS attachments(path TEXT PRIMARY KEY, name_key TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS attachments_name ON attachments(name_key);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, headings, tags, body,
    content='', detail=full, tokenize='unicode61 remove_diacritics 2'
);
"""


def insert(conn: sqlite3.Connection, parsed: list[tuple[Any, ...]]) -> None:
    """Insert notes as :func:`note_rows` made them, with ids after the highest one so far
    (ids follow the order in which notes were indexed)."""
    next_id = (
        conn.execute("SELECT seq FROM sqlite_sequence WHERE name='notes'").fetchone() or (0,)
    )[0]
    notes, fts, titles, aliases, links = [], [], [], [], []
    for note_id, (note, text_row, title_keys, alias_keys, link_rows) in enumerate(
        parsed, next_id + 1
    ):
        notes.append((note_id, *note))
        if text_row is not None:
            fts.append((note_id, *text_row))
        titles += [(note_id, key, kind) for key, kind in title_keys]
        aliases += [(note_id, key) for key in alias_keys]
        links += [(note_id, *row) for row in link_rows]
    conn.executemany("INSERT INTO notes VALUES (?,?,?,?,?,?,?,?,?)", notes)
    conn.executemany("INSERT INTO fts(rowid, title, headings, tags, body) VALUES (?,?,?,?,?)", fts)
    conn.executemany("INSERT INTO titles VALUES (?,?,?)", titles)
    conn.executemany("INSERT INTO aliases VALUES (?,?)", aliases)
    conn.executemany("INSERT INTO links VALUES (?,?,?,?,?)", links)


def note_rows(root: Path, f: FileStat) -> tuple[Any, ...]:
    """What the index holds of one note: its row, FTS columns, title and alias keys,
    links."""
    name = f.rel.rpartition("/")[2]
    note_stem = stem(f.rel)
    base = (f.rel, T.name_key(name), f.mtime_ns, f.size, int(f.link))
    text = read_text(root / f.rel, MAX_INDEX_CHARS * 4)
    if text is None:
        return (*base, 1, "", None), None, [], [], []
    text = text[:MAX_INDEX_CHARS]
    note = parse_note(text, note_stem)
    tags = "\t" + "\t".join(note.tags) + "\t" if note.tags else ""
    names = list(dict.fromkeys([note_stem, note.title, *note.aliases]))
    fts = (
        T.shadow(" ".join(names)),
        T.shadow("\n".join(h.text for h in note.headings)),
        T.shadow(" ".join(note.tags)),
        T.shadow(text),
    )
    kinds: dict[str, int] = {}
    for kind, name in [(0, note_stem), (1, note.title), *((2, a) for a in note.aliases)]:
        kinds.setdefault(T.title_key(name), kind)
    titles = list(kinds.items())
    aliases = list(dict.fromkeys(T.name_key(a) for a in note.aliases))
    links = [
        (link.raw, link.path, T.name_key(link.path).rpartition("/")[2], int(link.embed))
        for link in dict.fromkeys(note.links)
    ]
    return (*base, 0, tags, note.frontmatter_error), fts, titles, aliases, links
