"""The index's life: built behind the first search, kept when Co exits mid-build, used
as soon as it is complete, paged without re-reading, compact on disk, and searches that
leave out the notes a caller does not allow."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from co_obsidian import scan
from co_obsidian.keys import VAULT
from co_obsidian.tools import search_notes
from obsidian_vaults import write

from co_core import ToolResult

# One short-lived Co: a search, then exit (as `co ask` does), with the index at argv[2].
ONE_SEARCH = """
import sys
from pathlib import Path
from co_obsidian import index
from co_obsidian.index import VaultIndex
from co_obsidian.text import parse_query

index.BACKGROUND_BUILD_BYTES = 0  # what an earlier Co called a large vault
index.SYNC_NOTES = int(sys.argv[3])
index.BATCH_NOTES = int(sys.argv[4])
index.CLOSE_GRACE = float(sys.argv[5])
vault = VaultIndex(Path(sys.argv[1]), Path(sys.argv[2]))
hits, more = vault.search(parse_query("heron"), 0, 5)
print(len(hits), more, vault.answered_by)
vault.close()
"""


def until(condition: Callable[[], bool]) -> None:
    """Wait for something a background thread does (at most a minute)."""
    deadline = time.monotonic() + 60
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert condition()


def paths(result: ToolResult) -> list[str]:
    return result.data.get("paths", [])


def one_search(
    vault: Path, db: Path, sync_notes: int = 0, batch: int = 20, grace: float = 0.0
) -> list[str]:
    args = [str(vault), str(db), str(sync_notes), str(batch), str(grace)]
    done = subprocess.run(
        [sys.executable, "-c", ONE_SEARCH, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CO_OBSIDIAN_RG": "1"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def indexed(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        (count,) = conn.execute("SELECT count(*) FROM notes").fetchone()
    conn.close()
    return count


def heron_vault(vault: Path, notes: int) -> None:
    for i in range(notes):
        write(vault, f"n{i:04d}.md", f"# Note {i}\nthe heron came back, day {i}")


@pytest.fixture
def rg() -> None:
    if scan.executable() is None:
        pytest.skip("rg is not installed: the first search waits for the index")


def test_short_lived_processes_complete_the_index_between_them(
    vault: Path, tmp_path: Path, rg: None
) -> None:
    heron_vault(vault, 120)
    db = tmp_path / "index.sqlite"
    counts = []
    for _ in range(6):  # each one builds at least one batch of 20 and keeps it
        assert one_search(vault, db) == ["5", "True", "rg"]
        counts.append(indexed(db))
        if counts[-1] == 120:
            break
    assert counts == sorted(set(counts)) and counts[0] >= 20, counts
    assert counts[-1] == 120
    # the next one finds the index complete: it answers from it at once
    assert one_search(vault, db) == ["5", "True", "index"]


def test_a_co_that_exits_mid_build_lets_it_finish_first(
    vault: Path, tmp_path: Path, rg: None
) -> None:
    heron_vault(vault, 120)
    db = tmp_path / "index.sqlite"
    assert one_search(vault, db, grace=60)[:2] == ["5", "True"]  # the build had begun
    assert indexed(db) == 120


def test_the_first_search_answers_before_the_vault_is_indexed(
    vault: Path, tmp_path: Path, rg: None
) -> None:
    heron_vault(vault, 300)  # more than is indexed before answering (SYNC_NOTES)
    db = tmp_path / "index.sqlite"
    assert one_search(vault, db, sync_notes=200, batch=10)[:2] == ["5", "True"]
    assert 10 <= indexed(db) < 300  # the process ended while the index was built behind


def test_a_small_vault_is_answered_as_rg_does_and_indexed_behind(
    vault: Path, tmp_path: Path, rg: None
) -> None:
    heron_vault(vault, 50)
    db = tmp_path / "index.sqlite"
    assert one_search(vault, db, sync_notes=200, grace=60) == ["5", "True", "rg"]
    assert indexed(db) == 50


def test_a_restarted_co_answers_from_the_index_while_it_checks_for_changes(
    vault: Path, tmp_path: Path, rg: None
) -> None:
    heron_vault(vault, 50)
    db = tmp_path / "index.sqlite"
    one_search(vault, db, grace=60)  # an earlier Co completed the index
    assert indexed(db) == 50
    write(vault, "late.md", "a heron that came while Co was off")
    assert one_search(vault, db, grace=60) == ["5", "True", "index"]
    assert indexed(db) == 51  # the check behind the answer indexed the new note


def test_searches_use_the_index_as_soon_as_it_is_complete(
    vault: Path, ctx, monkeypatch: pytest.MonkeyPatch, rg: None
) -> None:
    from co_obsidian import index

    monkeypatch.setattr(index, "SYNC_NOTES", 0)  # built in the background
    filler = "lorem ipsum dolor " * 30
    write(vault, "body.md", f"gardening {filler} gardening {filler} gardening")
    write(vault, "heading.md", f"# Notes\n## Gardening\n{filler}")
    search_notes(ctx, "gardening")  # answered by rg; the index builds
    vault_index = ctx.deps.resource(VAULT).index()
    assert vault_index._builder is not None
    vault_index._builder.join(timeout=60)
    # the index ranks a heading match first (rg's ranking only counts lines)
    for _ in range(3):
        assert paths(search_notes(ctx, "gardening")) == ["heading.md", "body.md"]


def test_the_write_ahead_log_is_folded_into_the_index(vault: Path, ctx, co_dirs: Path) -> None:
    for i in range(150):
        write(vault, f"n{i:03d}.md", f"note {i} " + "words and more words " * 200)
    assert search_notes(ctx, "note").count == 10
    assert ctx.deps.resource(VAULT).index().count() == 150  # built, the index still open
    db = next((co_dirs.parent / "co-cache" / "obsidian").glob("*.sqlite"))
    wal = Path(f"{db}-wal")
    assert db.stat().st_size > 100_000
    assert not wal.exists() or wal.stat().st_size == 0
    write(vault, "new.md", "one more note")
    ctx.deps.resource(VAULT).index().refresh(force=True)
    assert not wal.exists() or wal.stat().st_size == 0


def test_pages_read_on_agree_with_pages_read_afresh(vault: Path, make_ctx) -> None:
    for i in range(64):
        write(vault, f"n{i:02d}.md", f"the weekly review, part {i}" + " filler" * i)
    write(vault, "comma.md", "weekly, review")  # found by the index, refused on reading
    first = make_ctx(vault, recheck_seconds=0)
    onward = [paths(search_notes(first, '"weekly review"', limit=10, page=p)) for p in range(1, 8)]
    fresh = []
    for page in range(1, 8):  # each page from a new index object: nothing kept
        ctx = make_ctx(vault, recheck_seconds=0)
        fresh.append(paths(search_notes(ctx, '"weekly review"', limit=10, page=page)))
        ctx.deps.close()
    assert onward == fresh
    assert sorted(p for page in onward for p in page) == sorted(f"n{i:02d}.md" for i in range(64))
    # a change to the vault between pages is seen by the next page
    write(vault, "Weekly review.md", "the title note")
    assert paths(search_notes(first, '"weekly review"', limit=10, page=1))[0] == "Weekly review.md"
    later = [paths(search_notes(first, '"weekly review"', limit=10, page=p)) for p in range(1, 8)]
    assert sorted(p for page in later for p in page) == sorted(
        [*(f"n{i:02d}.md" for i in range(64)), "Weekly review.md"]
    )


def _private(path: str) -> bool:
    return not path.startswith("Private/")


def test_a_search_leaves_out_what_the_caller_does_not_allow(
    vault: Path, ctx, monkeypatch: pytest.MonkeyPatch
) -> None:
    from co_obsidian.text import parse_query

    write(vault, "Private/secret.md", "the heron password")
    write(vault, "Private/other.md", "heron again")
    write(vault, "Inbox/public.md", "a heron in the open [[secret]]")
    os.symlink(vault / "Private" / "secret.md", vault / "shortcut.md")
    for i in range(12):
        write(vault, f"Inbox/n{i:02d}.md", f"heron number {i}")
    vault_index = ctx.deps.resource(VAULT).index()
    hits, more = vault_index.search(parse_query("heron"), 0, 50, allowed=_private)
    shown = [h.path for h in hits]
    assert len(shown) == 13 and not more
    assert all(p.startswith("Inbox/") for p in shown)  # not Private/, nor the symlink into it
    pages = [vault_index.search(parse_query("heron"), o, 5, allowed=_private) for o in (0, 5, 10)]
    assert [h.path for page, _ in pages for h in page] == shown
    assert [more for _, more in pages] == [True, True, False]
    rows, total = vault_index.notes(None, None, 0, 50, allowed=_private)
    assert total == 13 and all(p.startswith("Inbox/") for p, _ in rows)
    _links, back = vault_index.links("Private/secret.md", allowed=_private)
    assert back == ["Inbox/public.md"]
    if scan.executable() is not None:  # the same while the index is not ready
        found = vault_index._unindexed(parse_query("heron"), 0, 50, _private)
        assert found is not None and sorted(h.path for h in found[0]) == sorted(shown)


def test_searches_during_a_build_do_not_wait_for_it(
    vault: Path, make_ctx, co_dirs: Path, monkeypatch: pytest.MonkeyPatch, rg: None
) -> None:
    from co_obsidian import index

    heron_vault(vault, 30)
    ctx = make_ctx(vault)
    assert search_notes(ctx, "heron").count == 10  # indexed
    ctx.deps.close()
    for i in range(30, 60):
        write(vault, f"n{i:04d}.md", f"# Note {i}\nthe heron came back, day {i}")
    monkeypatch.setattr(index, "SYNC_NOTES", 0)  # 30 new notes: too many to index first
    db = next((co_dirs.parent / "co-cache" / "obsidian").glob("*.sqlite"))
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another Co writing: the build waits for it
    try:
        ctx = make_ctx(vault)
        # answered at once, from the index as an earlier Co left it, or by rg
        first = search_notes(ctx, "heron", limit=50)
        vault_index = ctx.deps.resource(VAULT).index()
        builder = vault_index._builder
        assert first.count >= 30
        until(lambda: not vault_index._ready)  # the check found 30 new notes: too many
        second = search_notes(ctx, "heron day 59")  # while the build waits for the writer
        # answered by rg without waiting for the build (which would have given up on
        # the busy database after 5 s, and a new one would have started)
        assert vault_index.answered_by == "rg" and paths(second) == ["n0059.md"]
        assert vault_index._builder is builder and builder.is_alive()
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    builder.join(timeout=60)
    assert vault_index.count() == 60


def test_a_change_of_the_rules_is_seen_by_the_next_search_and_listing(
    co_dirs: Path, vault: Path, tmp_path: Path
) -> None:
    """A turn of Co: the rules ask before reading Private/, so searches leave it out; the
    user then allows it for the session, and the very next search and listing of the
    same turn show it (the answers the index kept were for the rules before)."""
    from co_core.testing import Approvals, make_app, run_turn, script_calls

    write(vault, "Private/Diary.md", "the heron password")
    for i in range(3):
        write(vault, f"Inbox/n{i}.md", f"heron number {i}")
    ask = [{"match": "obsidian:read:Private/**", "effect": "ask"}]
    settings = {"obsidian": {"vault_path": str(vault)}, "policy": {"rules": ask}}
    app = make_app({**settings, "tool_budget": 100_000}, cwd=tmp_path)  # every tool, every turn
    turn = run_turn(
        app,
        "go",
        script_calls(
            ("list_notes", {}),  # waits for the index: the searches below come from it
            ("search_notes", {"query": "heron"}),
            ("read_note", {"name": "Private/Diary"}),  # asked: yes, for the session
            ("search_notes", {"query": "heron"}),
            ("list_notes", {}),
            answer=lambda seen: "\n---\n".join(seen),
        ),
        approvals=Approvals(True, scope="session"),
    )
    listed, before, read, after, listed_after = turn.output.split("\n---\n")
    assert "Private/" not in listed and "Private/" not in before
    assert read == "the heron password"
    assert "Private/Diary.md" in after and "Private/Diary.md" in listed_after
