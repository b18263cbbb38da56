"""search_notes on real vaults: matching rules, ranking, snippets, pages, Unicode."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from co_obsidian import scan
from co_obsidian.keys import VAULT
from co_obsidian.tools import search_notes
from obsidian_vaults import indexed, write
from pydantic_ai import ModelRetry

from co_core import ToolResult


def paths(result: ToolResult) -> list[str]:
    return result.data.get("paths", [])


def test_every_word_must_match_as_a_whole_word_in_any_case(vault: Path, ctx) -> None:
    write(vault, "a.md", "The Budget review is on Monday.")
    write(vault, "b.md", "The budget was reviewed last week.")
    write(vault, "c.md", "A review without money talk.")
    result = search_notes(ctx, "budget REVIEW")
    assert paths(result) == ["a.md"]
    assert result.count == 1 and result.has_more is False
    assert "a.md" in result.display and "**Budget**" in result.display


def test_nothing_matched_is_count_zero_not_an_error(vault: Path, ctx) -> None:
    write(vault, "a.md", "hello world")
    result = search_notes(ctx, "zanzibar")
    assert result.count == 0 and result.has_more is False
    assert "No notes match 'zanzibar'" in result.display


def test_quoted_phrase_must_be_adjacent(vault: Path, ctx) -> None:
    write(vault, "near.md", "the weekly\n  review happens")
    write(vault, "far.md", "review of the weekly numbers")
    assert paths(search_notes(ctx, '"weekly review"')) == ["near.md"]
    assert sorted(paths(search_notes(ctx, "weekly review"))) == ["far.md", "near.md"]


def test_accents_case_and_unicode_normal_forms(vault: Path, ctx) -> None:
    write(vault, "nfc.md", "Un CAFÉ à Paris")
    write(vault, "nfd.md", "le cafe\u0301 du coin")  # decomposed é
    write(vault, "plain.md", "cafeteria only")
    assert sorted(paths(search_notes(ctx, "café"))) == ["nfc.md", "nfd.md"]
    assert sorted(paths(search_notes(ctx, "cafe"))) == ["nfc.md", "nfd.md"]
    write(vault, "de.md", "Die Straße ist grün.")
    assert paths(search_notes(ctx, "STRASSE")) == []  # ß is not ss; no false hit
    assert paths(search_notes(ctx, "straße GRÜN")) == ["de.md"]
    write(vault, "ru.md", "Привет, мир! Проект готов.")
    assert paths(search_notes(ctx, "проект")) == ["ru.md"]


def test_cjk_matches_inside_runs_without_spaces(vault: Path, ctx) -> None:
    write(vault, "ja.md", "# 旅行\n明日は東京タワーに行きます。")
    write(vault, "zh.md", "我们在北京开会。")
    write(vault, "ko.md", "서울에서 만나요")
    assert paths(search_notes(ctx, "東京")) == ["ja.md"]
    assert paths(search_notes(ctx, "タワー")) == ["ja.md"]
    assert paths(search_notes(ctx, "京タ")) == ["ja.md"]
    assert paths(search_notes(ctx, "北京 开会")) == ["zh.md"]
    assert paths(search_notes(ctx, "서울")) == ["ko.md"]
    assert paths(search_notes(ctx, "東京 北京")) == []
    assert "**東京**" in search_notes(ctx, "東京").display


def test_emoji_in_text(vault: Path, ctx) -> None:
    write(vault, "pizza.md", "Friday: 🍕night with friends")
    write(vault, "rocket.md", "launch 🚀")
    assert paths(search_notes(ctx, "🍕")) == ["pizza.md"]
    assert paths(search_notes(ctx, "🍕 friends")) == ["pizza.md"]


def test_symbols_in_terms_are_matched_literally(vault: Path, ctx) -> None:
    write(vault, "cpp.md", "I write C++ at work.")
    write(vault, "c.md", "The letter c alone.")
    assert paths(search_notes(ctx, "c++")) == ["cpp.md"]


def test_title_and_heading_matches_rank_first(vault: Path, ctx) -> None:
    filler = "lorem ipsum dolor sit amet " * 20
    write(vault, "body.md", f"{filler} gardening {filler}")
    write(vault, "heading.md", f"# Notes\n## Gardening\n{filler}")
    write(vault, "Gardening.md", f"{filler} tips")
    assert paths(search_notes(ctx, "gardening")) == ["Gardening.md", "heading.md", "body.md"]


def test_snippet_is_around_the_best_match(vault: Path, ctx) -> None:
    words = " ".join(f"word{i}" for i in range(400))
    write(vault, "long.md", f"{words} the ferry to zanzibar leaves at noon {words}")
    display = search_notes(ctx, "zanzibar ferry").display
    assert "long.md" in display
    assert "**ferry** to **zanzibar** leaves" in display
    assert "   …" in display  # the snippet starts mid-note, not at its start


def test_snippet_of_one_term_is_around_its_first_match(vault: Path, ctx) -> None:
    words = " ".join(f"word{i}" for i in range(300))
    write(vault, "a.md", f"{words} heron one heron two heron {words} heron far away")
    display = search_notes(ctx, "HERON").display
    assert "**heron** one **heron** two **heron**" in display
    assert "far away" not in display and display.count("**heron**") == 3


@pytest.mark.parametrize(
    "text, query, width, shown",
    [
        ("aaa weekly review zzz", '"weekly review"', 5, "…week…"),  # match wider than window
        ("review reviews review, Review!", "review", 20, "**review** reviews revie…"),
        ("one Review here reviewed then review", "review", 14, "one **Review** her…"),
        ("no match here", "heron", 8, "no match…"),
    ],
)
def test_snippet_marks_only_whole_matches_inside_the_window(
    text: str, query: str, width: int, shown: str
) -> None:
    from co_obsidian import text as T

    assert T.snippet(text, T.parse_query(query).patterns, width) == shown


def test_pages(vault: Path, ctx) -> None:
    for i in range(7):
        write(vault, f"n{i}.md", f"alpha note {i}")
    first = search_notes(ctx, "alpha", limit=3)
    second = search_notes(ctx, "alpha", limit=3, page=2)
    third = search_notes(ctx, "alpha", limit=3, page=3)
    assert (first.count, first.has_more, first.next_page) == (3, True, 2)
    assert (second.count, second.has_more) == (3, True)
    assert (third.count, third.has_more) == (1, False)
    seen = paths(first) + paths(second) + paths(third)
    assert sorted(seen) == [f"n{i}.md" for i in range(7)]
    assert "4–6" in second.display and "page=3" in second.display
    assert search_notes(ctx, "alpha", limit=3, page=4).count == 0


def test_bad_calls_are_model_retries(vault: Path, ctx) -> None:
    with pytest.raises(ModelRetry, match="empty"):
        search_notes(ctx, '  ""  ')
    with pytest.raises(ModelRetry, match="page"):
        search_notes(ctx, "x", page=0)


def test_no_vault_configured_names_the_setting(make_ctx) -> None:
    with pytest.raises(ModelRetry, match="co config set obsidian.vault_path"):
        search_notes(make_ctx(None), "anything")


def test_missing_vault_names_the_setting(tmp_path: Path, make_ctx) -> None:
    with pytest.raises(ModelRetry, match=r"does not exist.*obsidian\.vault_path"):
        search_notes(make_ctx(tmp_path / "nope"), "anything")


def test_hidden_folders_attachments_and_binary_files_are_ignored(vault: Path, ctx) -> None:
    write(vault, "real.md", "secret word: quokka")
    write(vault, ".obsidian/workspace.md", "quokka in config")
    write(vault, ".trash/old.md", "quokka deleted")
    write(vault, "attachments/notes.txt", "quokka text file")
    (vault / "attachments" / "img.png").write_bytes(b"\x89PNG\r\n\x1a\nquokka\0\0")
    (vault / "binary.md").write_bytes(b"quokka\0\0\0\xff\xfe binary")
    (vault / "latin1.md").write_bytes("quokka caf\xe9".encode("latin-1"))
    assert sorted(paths(search_notes(ctx, "quokka"))) == ["latin1.md", "real.md"]


def test_huge_note_is_searched_to_the_end(vault: Path, ctx) -> None:
    body = ("filler text line\n" * 200_000) + "the needle is here\n"
    write(vault, "huge.md", body)  # about 3.4 MB
    write(vault, "small.md", "no match")
    result = search_notes(ctx, "needle")
    assert paths(result) == ["huge.md"]
    assert "**needle**" in result.display and len(result.display) < 1000


def test_renamed_and_deleted_notes_between_searches(vault: Path, ctx) -> None:
    write(vault, "old name.md", "project walrus")
    write(vault, "gone.md", "project walrus too")
    write(vault, "sub/keep.md", "unrelated")
    assert sorted(paths(search_notes(ctx, "walrus"))) == ["gone.md", "old name.md"]
    (vault / "old name.md").rename(vault / "sub" / "new name.md")
    (vault / "gone.md").unlink()
    write(vault, "sub/fresh.md", "a new walrus appears")
    assert sorted(paths(search_notes(ctx, "walrus"))) == ["sub/fresh.md", "sub/new name.md"]
    # the old text is not shown from the index once the file changed
    (vault / "sub" / "fresh.md").unlink()
    write(vault, "sub/fresh.md", "nothing here now")
    assert paths(search_notes(ctx, "walrus")) == ["sub/new name.md"]


def test_edited_notes_are_reindexed(vault: Path, make_ctx) -> None:
    ctx = make_ctx(vault, recheck_seconds=0)
    note = write(vault, "a.md", "first draft")
    assert search_notes(ctx, "pelican").count == 0
    note.write_text("first draft with a pelican", encoding="utf-8")
    assert paths(search_notes(ctx, "pelican")) == ["a.md"]
    note.write_text("pelican removed? no: albatross", encoding="utf-8")
    assert paths(search_notes(ctx, "albatross")) == ["a.md"]


def test_index_rebuilt_when_deleted_or_corrupt(vault: Path, ctx, co_dirs: Path) -> None:
    write(vault, "a.md", "heron")
    assert search_notes(ctx, "heron").count == 1
    index_dir = co_dirs.parent / "co-cache" / "obsidian"
    db = next(index_dir.glob("*.sqlite"))
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    assert search_notes(ctx, "heron").count == 1
    assert indexed(ctx).count() == 1 and db.exists()
    ctx.deps.close()
    db.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    write(vault, "b.md", "heron two")
    assert sorted(paths(search_notes(ctx, "heron"))) == ["a.md", "b.md"]


def _aged(path: Path, days: float) -> Path:
    """Set a note's modification time to ``days`` ago."""
    stamp = time.time() - days * 86400
    os.utime(path, (stamp, stamp))
    return path


def test_very_common_words_rank_titles_first_then_newest_first(
    vault: Path, make_ctx, monkeypatch: pytest.MonkeyPatch
) -> None:
    from co_obsidian import rank

    monkeypatch.setattr(rank, "RANK_ALL_UP_TO", 2)  # as if "gardening" were in 2,000+ notes
    ctx = make_ctx(vault, recheck_seconds=0)
    for i, days in enumerate([3, 1, 5, 2, 4]):
        _aged(write(vault, f"b{i}.md", f"some gardening text {i}"), days)
    _aged(write(vault, "h.md", "# Gardening\nin a heading"), 9)
    _aged(write(vault, "z/Gardening.md", "tips"), 0.5)  # the title weighs more, not the date
    indexed(ctx)
    found = paths(search_notes(ctx, "gardening", limit=50))
    assert found == ["z/Gardening.md", "h.md", "b1.md", "b3.md", "b0.md", "b4.md", "b2.md"]
    write(vault, "b2.md", "some gardening text, edited just now")
    found = paths(search_notes(ctx, "gardening", limit=50))
    assert found == ["z/Gardening.md", "h.md", "b2.md", "b1.md", "b3.md", "b0.md", "b4.md"]


@pytest.mark.parametrize("many", [False, True])
def test_phrases_rank_titles_first_however_many_notes_match(
    vault: Path, ctx, monkeypatch: pytest.MonkeyPatch, many: bool
) -> None:
    from co_obsidian import rank

    if many:  # as if the phrase's words were together in 2,000+ notes
        monkeypatch.setattr(rank, "RANK_ALL_UP_TO", 2)
    for i in range(5):
        write(vault, f"b{i}.md", f"some garden tips {i}, and garden and tips apart")
    write(vault, "other.md", "tips for the garden")  # both words, not the phrase
    write(vault, "z/Garden tips.md", "short")
    found = paths(search_notes(ctx, '"garden tips"', limit=50))
    assert found[0] == "z/Garden tips.md"
    assert sorted(found[1:]) == [f"b{i}.md" for i in range(5)]
    found = paths(search_notes(ctx, '"garden tips" short', limit=50))
    assert found == ["z/Garden tips.md"]


@pytest.mark.parametrize("many", [False, True])
def test_phrase_of_common_words_finds_exactly_the_notes_holding_it(
    vault: Path, make_ctx, monkeypatch: pytest.MonkeyPatch, many: bool
) -> None:
    from co_obsidian import rank

    if many:  # the words are together in "too many" notes (8 of them; the phrase, as
        # FTS5 sees it, in 6): the phrase is not scored
        monkeypatch.setattr(rank, "RANK_ALL_UP_TO", 6)
    ctx = make_ctx(vault, recheck_seconds=0)
    holding = {
        "upper.md": "Order a CAFÉ CRÈME, then leave.",
        "nfd.md": "le cafe\u0301 cre\u0300me du matin",  # decomposed accents
        "plain.md": "cafe creme, no accents",
        "lines.md": "one café\n   crème across lines",
        "heading.md": "# Café crème\nbody",
    }
    missing = {
        "comma.md": "café, crème: punctuation between",
        "reversed.md": "crème café",
        "longer.md": "cafés crèmes and cafe cremeux",
        "apart.md": "café au lait and crème brûlée",
    }
    for days, (rel, text) in enumerate({**holding, **missing}.items()):
        _aged(write(vault, rel, text), days)
    indexed(ctx)
    for query in ['"café crème"', '"CAFE creme"', '"cafe\u0301 crème"']:
        found = paths(search_notes(ctx, query, limit=50))
        assert sorted(found) == sorted(holding)
        assert found[0] == "heading.md"
        if many:  # after the heading match, newest first
            assert found == ["heading.md", "upper.md", "nfd.md", "plain.md", "lines.md"]
    assert paths(search_notes(ctx, '"café crème" matin', limit=50)) == ["nfd.md"]
    _aged(write(vault, "plain.md", "no longer"), 0)
    (vault / "nfd.md").unlink()
    assert sorted(paths(search_notes(ctx, '"café crème"', limit=50))) == [
        "heading.md",
        "lines.md",
        "upper.md",
    ]


def test_pages_of_an_unscored_phrase_list_every_match_once(
    vault: Path, ctx, monkeypatch: pytest.MonkeyPatch
) -> None:
    from co_obsidian import rank

    monkeypatch.setattr(rank, "RANK_ALL_UP_TO", 2)
    for i in range(7):
        _aged(write(vault, f"n{i}.md", f"the weekly review, part {i}"), i)
    _aged(write(vault, "Weekly review.md", "how to"), 30)
    write(vault, "other.md", "weekly notes and a review")
    pages = [search_notes(ctx, '"weekly review"', limit=3, page=p) for p in (1, 2, 3)]
    assert [paths(r) for r in pages] == [
        ["Weekly review.md", "n0.md", "n1.md"],
        ["n2.md", "n3.md", "n4.md"],
        ["n5.md", "n6.md"],
    ]
    assert [r.has_more for r in pages] == [True, True, False]


def test_phrase_of_rarer_words_is_ranked_by_bm25(vault: Path, ctx) -> None:
    filler = "lorem ipsum dolor sit amet " * 10
    write(vault, "once.md", f"{filler} the weekly review {filler}")
    write(vault, "thrice.md", f"{filler} weekly review, weekly review, weekly review {filler}")
    write(vault, "none.md", f"{filler} a review, weekly {filler}")
    indexed(ctx)
    assert paths(search_notes(ctx, '"weekly review"')) == ["thrice.md", "once.md"]


def test_index_of_an_older_version_is_rebuilt(vault: Path, make_ctx, co_dirs: Path) -> None:
    import sqlite3

    write(vault, "a.md", "heron")
    ctx = make_ctx(vault)
    assert paths(search_notes(ctx, "heron")) == ["a.md"]
    ctx.deps.close()
    db = next((co_dirs.parent / "co-cache" / "obsidian").glob("*.sqlite"))
    with sqlite3.connect(db) as conn:  # an index as an older Co left it: schema 4, and
        conn.execute("UPDATE meta SET value='4' WHERE key='schema'")  # content that does
        conn.execute("INSERT INTO fts(fts) VALUES ('delete-all')")  # not fit this version
    conn.close()
    write(vault, "b.md", "a heron too")
    ctx = make_ctx(vault)
    assert sorted(paths(search_notes(ctx, "heron"))) == ["a.md", "b.md"]
    # rebuilt in the background; the search meanwhile reads the notes
    vault_index = ctx.deps.resource(VAULT).index()
    assert vault_index.answered_by == "rg" or scan.executable() is None
    indexed(ctx)
    assert sorted(paths(search_notes(ctx, "heron"))) == ["a.md", "b.md"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone() == (
            index_schema(),
        )
        assert conn.execute("SELECT count(*) FROM notes").fetchone() == (2,)
    conn.close()


def index_schema() -> str:
    from co_obsidian.store import SCHEMA

    return SCHEMA


def test_large_unindexed_vault_is_searched_directly_while_the_index_builds(
    vault: Path, ctx, monkeypatch: pytest.MonkeyPatch
) -> None:
    from co_obsidian import index, scan

    if scan.executable() is None:
        pytest.skip("rg is not installed")
    monkeypatch.setattr(index, "SYNC_NOTES", 0)  # every vault counts as large
    for i in range(30):
        write(vault, f"notes/n{i:02d}.md", f"# Day {i}\nthe heron came back" + " filler" * i)
    write(vault, "Heron.md", "all about the bird")
    write(vault, "other.md", "no bird here")
    first = search_notes(ctx, "heron", limit=5)  # answered by rg reading the files
    vault_index = ctx.deps.resource(VAULT).index()
    assert vault_index._builder is not None  # and the index is being built
    vault_index._builder.join(timeout=60)
    assert vault_index.count() == 32
    second = search_notes(ctx, "heron", limit=5)  # answered by the index
    assert first.count == second.count == 5 and first.has_more and second.has_more
    assert paths(first)[0] == paths(second)[0] == "Heron.md"
    everything = set()
    for page in range(1, 8):
        everything |= set(paths(search_notes(ctx, "heron", limit=5, page=page)))
    assert len(everything) == 31 and "other.md" not in everything
    # pages answered without the index (as while it builds) hold the same notes
    from co_obsidian.text import parse_query

    cold, more, offset = [], True, 0
    while more:
        found = vault_index._unindexed(parse_query("heron"), offset, 5, None)
        assert found is not None
        hits, more = found
        cold += [h.path for h in hits]
        offset += 5
    assert len(cold) == 31 and set(cold) == everything and cold[0] == "Heron.md"


def test_text_edited_in_place_is_never_shown_stale(vault: Path, ctx) -> None:
    # default recheck interval: an in-place edit may not be reindexed yet, but a hit is
    # always checked against the file, so removed text is never reported
    note = write(vault, "a.md", "the walrus sleeps")
    assert paths(search_notes(ctx, "walrus")) == ["a.md"]
    note.write_text("the seal sleeps", encoding="utf-8")
    assert search_notes(ctx, "walrus").count == 0


def test_closing_during_the_background_build_leaves_a_usable_index(
    vault: Path, make_ctx, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(3000):
        write(vault, f"n{i:04d}.md", f"note {i} otter")
    first = make_ctx(vault)
    assert search_notes(first, "otter", limit=1).has_more
    first.deps.close()  # Co exits while the index may still be building
    second = make_ctx(vault)
    second_index = second.deps.resource(VAULT).index()
    builder = second_index._builder
    search_notes(second, "otter", limit=1)
    if second_index._builder is not builder and second_index._builder is not None:
        second_index._builder.join(timeout=120)
    assert second_index.count() == 3000
    assert search_notes(second, "note 2999").data["paths"] == ["n2999.md"]


CONSISTENCY_NOTES = {
    "fr/Café.md": "Un CAFÉ noir à Paris — très bon",
    "fr/nfd.md": "le cafe\u0301 du coin, déjà vu",
    "pl.md": "Łódź i Kraków: żółw",
    "de.md": "Die Straße ist grün. GRÜN!",
    "ru.md": "Привет, МИР! проект",
    "ja.md": "明日は東京タワーに行きます。🍕",
    "ko.md": "서울에서 만나요",
    "mixed.md": "—project— and東京project and c++ code",
    "emoji.md": "launch🚀now ☕",
    "plain.md": "weekly review of the project budget",
    "path only/Zanzibar trip.md": "nothing inside",
    "tr.md": "İSTANBUL'da ılık bir gün",
    "under.md": "snake_heron and x_quokka\r\nweekly\r\n  review\x1ftail",
    "ignored by git.md": "gitignored walrus",
}
CONSISTENCY_QUERIES = [
    "cafe",
    "café",
    "CAFÉ noir",
    "deja",
    "krakow",
    "lodz",
    "żółw",
    "zolw",
    "strasse",
    "grün",
    "grun",
    "мир",
    "ПРОЕКТ",
    "東京",
    "タワー",
    "🍕",
    "서울",
    "project",
    "c++",
    "🚀",
    "☕",
    '"weekly review"',
    "zanzibar",
    "trip",
    "paris très",
    "istanbul",
    "heron",
    "quokka",
    "walrus",
    '"weekly review" tail',
    "snake",
    # several terms: the rarest goes first through the whole vault, the others only
    # through the notes holding it; a term may be in the path instead of the text
    "zanzibar trip",
    "trip nothing",
    "project budget",
    "heron snake",
    "linked heron",
    "review tail weekly",
    "noir très café",
    'zanzibar "trip nothing"',  # a phrase from the path into the text is no match
    "only",  # a folder's name
]


def test_search_without_index_agrees_with_the_index(vault: Path, ctx) -> None:
    # while the index builds, rg preselects the notes; its patterns must never miss a
    # note the index finds (accents, case, word edges, phrases over lines, paths)
    from co_obsidian import scan
    from co_obsidian.text import parse_query

    if scan.executable() is None:
        pytest.skip("rg is not installed")
    for rel, text in CONSISTENCY_NOTES.items():
        write(vault, rel, text)
    (vault / ".gitignore").write_text("ignored*\n", encoding="utf-8")  # not a vault rule
    write(vault, "sub/real.md", "a linked heron")
    (vault / "link.md").symlink_to(vault / "sub" / "real.md")
    vault_index = ctx.deps.resource(VAULT).index()
    vault_index.refresh()
    for query in CONSISTENCY_QUERIES:
        parsed = parse_query(query)
        found = vault_index._unindexed(parsed, 0, 50, None)
        assert found is not None, query
        indexed, _ = vault_index.search(parsed, 0, 50)
        assert sorted(h.path for h in found[0]) == sorted(h.path for h in indexed), query
    # and the rules themselves, on a few of them
    assert sorted(paths(search_notes(ctx, "cafe"))) == ["fr/Café.md", "fr/nfd.md"]
    assert sorted(paths(search_notes(ctx, "project"))) == ["mixed.md", "plain.md"]
    assert paths(search_notes(ctx, "ПРОЕКТ")) == ["ru.md"]
    assert paths(search_notes(ctx, "zanzibar")) == ["path only/Zanzibar trip.md"]
    assert search_notes(ctx, "only").count == 0  # folder names are not searched
    assert sorted(paths(search_notes(ctx, "krakow"))) == ["pl.md"]
    assert sorted(paths(search_notes(ctx, "heron"))) == ["link.md", "sub/real.md", "under.md"]
    assert paths(search_notes(ctx, "istanbul")) == ["tr.md"]
    assert paths(search_notes(ctx, '"weekly review" tail')) == ["under.md"]


def test_without_rg_the_first_search_waits_for_the_index(
    vault: Path, ctx, monkeypatch: pytest.MonkeyPatch
) -> None:
    from co_obsidian import index

    monkeypatch.setattr(index, "SYNC_NOTES", 0)  # a vault too large to index first ...
    monkeypatch.setenv("CO_OBSIDIAN_RG", "0")  # ... and no rg to search it meanwhile
    for rel, text in CONSISTENCY_NOTES.items():
        write(vault, rel, text)
    assert sorted(paths(search_notes(ctx, "cafe"))) == ["fr/Café.md", "fr/nfd.md"]
    assert ctx.deps.resource(VAULT).index().count() == len(CONSISTENCY_NOTES)


def _notifications() -> bool:
    from co_obsidian.watch import Watcher

    watcher = Watcher(".")
    try:
        return watcher.start([""])
    finally:
        watcher.close()


@pytest.mark.skipif(not _notifications(), reason="no inotify here: edits are found by polling")
def test_edits_are_noticed_at_once_through_notifications(vault: Path, ctx) -> None:
    # default settings: no full check for a while, yet every kind of change is seen
    note = write(vault, "a.md", "first draft")
    write(vault, "sub/b.md", "other")
    assert search_notes(ctx, "pelican").count == 0
    note.write_text("first draft with a pelican", encoding="utf-8")  # in place
    assert paths(search_notes(ctx, "pelican")) == ["a.md"]
    (vault / "sub" / "b.md").write_text("a pelican too", encoding="utf-8")
    (vault / "sub" / "b.md").rename(vault / "sub" / "c.md")
    write(vault, "new/deeper/d.md", "pelican in a new folder")
    assert sorted(paths(search_notes(ctx, "pelican"))) == ["a.md", "new/deeper/d.md", "sub/c.md"]
    write(vault, "new/deeper/e.md", "pelican again")  # in the folder found by the rescan
    (vault / "a.md").unlink()
    assert sorted(paths(search_notes(ctx, "pelican"))) == [
        "new/deeper/d.md",
        "new/deeper/e.md",
        "sub/c.md",
    ]
    write(vault, "tagged.md", "#bird")
    assert list_tags_count(ctx, "bird") == 1


def list_tags_count(ctx, tag: str) -> int:
    from co_obsidian.tools import list_notes

    return list_notes(ctx, tag=tag).count or 0


def test_what_counts_as_a_note(vault: Path, tmp_path: Path) -> None:
    # hidden folders, attachments and symlinks: the walk with and without sizes agree
    from co_obsidian.vault import walk

    outside = tmp_path / "outside.md"
    outside.write_text("secret", encoding="utf-8")
    write(vault, "a.md", "x")
    write(vault, "deep/er/b.md", "x")
    write(vault, ".obsidian/c.md", "x")
    write(vault, "d/.hidden.md", "x")
    write(vault, "pic.png", "x")
    write(vault, "Loud.MD", "x")
    write(vault, "notes.md/e.md", "a folder named like a note")
    (vault / "in.md").symlink_to(vault / "a.md")
    (vault / "out.md").symlink_to(outside)
    (vault / "gone.md").symlink_to(vault / "missing.md")
    (vault / "folder link.md").symlink_to(vault / "deep")
    (vault / "loop").symlink_to(vault)
    links: list[str] = []
    attachments: list[str] = []
    names = [f.rel for f in walk(vault, sizes=False, links=links, attachments=attachments)]
    assert sorted(names) == sorted(f.rel for f in walk(vault))
    assert sorted(names) == ["Loud.MD", "a.md", "deep/er/b.md", "in.md", "notes.md/e.md"]
    assert links == ["in.md"] and attachments == ["pic.png"]


def test_a_note_gone_since_the_listing_does_not_stop_a_search_without_index(
    vault: Path, ctx, monkeypatch: pytest.MonkeyPatch
) -> None:
    from co_obsidian import index, scan
    from co_obsidian.text import parse_query

    if scan.executable() is None:
        pytest.skip("rg is not installed")
    monkeypatch.setattr(index, "SYNC_NOTES", 0)
    write(vault, "a.md", "the heron and the snake")
    write(vault, "b.md", "a heron alone")
    vault_index = ctx.deps.resource(VAULT).index()
    # listed, then deleted: "gone/Heron.md" matches by its name
    vault_index._listing = (["a.md", "b.md", "gone/Heron.md"], [])
    found = vault_index._unindexed(parse_query("heron snake"), 0, 10, None)
    assert found is not None and [h.path for h in found[0]] == ["a.md"]
