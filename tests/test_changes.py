"""The change record: persisted per session and turn, listed with diffs, undone safely."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from co_core.undo import snapshots
from co_core.undo.changes import ChangeRecord, UndoError, load_turns
from co_core.undo.report import format_turns


@pytest.fixture
def ws(tmp_path: Path, co_dirs: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def write(record: ChangeRecord, path: Path, text: str) -> None:
    record.before_write(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_undo_reverts_last_turn_and_survives_restart(ws: Path) -> None:
    a, b = ws / "a.txt", ws / "sub" / "b.txt"
    a.write_text("original\n")
    record = ChangeRecord("s1")
    record.next_turn()
    write(record, a, "first edit\n")
    record.next_turn()
    write(record, a, "second edit\n")
    write(record, b, "new file\n")

    again = ChangeRecord("s1")  # a new process: everything comes from SQLite
    report = again.undo()
    assert report.turn == 2
    assert a.read_text() == "first edit\n"
    assert not b.exists()
    again.undo()
    assert a.read_text() == "original\n"
    with pytest.raises(UndoError, match="nothing to undo"):
        again.undo()


def test_undo_says_removed_for_what_the_turn_created_and_restored_for_the_rest(
    ws: Path,
) -> None:
    edited, created, deleted = ws / "edited.txt", ws / "new" / "created.txt", ws / "gone.txt"
    edited.write_text("before\n")
    deleted.write_text("keep me\n")
    record = ChangeRecord("s1")
    record.next_turn()
    write(record, edited, "after\n")
    write(record, created, "fresh\n")
    record.before_write(deleted)
    deleted.unlink()
    report = record.undo()
    assert report.removed == [str(created)]
    assert sorted(report.restored) == sorted([str(edited), str(deleted)])
    text = report.text()
    assert text.startswith("Undid turn 1: 1 removed, 2 restored.")
    assert f"removed {created} (the turn created it)" in text
    assert f"restored {created}" not in text
    assert not created.exists() and deleted.read_text() == "keep me\n"


def test_first_state_in_a_turn_wins(ws: Path) -> None:
    a = ws / "a.txt"
    a.write_text("v0")
    record = ChangeRecord("s")
    record.next_turn()
    write(record, a, "v1")
    write(record, a, "v2")
    record.undo()
    assert a.read_text() == "v0"


def test_listing_shows_turns_and_diffs(ws: Path) -> None:
    a = ws / "notes.md"
    a.write_text("alpha\nbeta\n")
    record = ChangeRecord("s")
    record.next_turn()
    write(record, a, "alpha\ngamma\n")
    record.next_turn()
    write(record, ws / "new.txt", "hello\n")
    text = format_turns(load_turns("s", record.db_path))
    assert "turn 1" in text and "turn 2" in text
    assert "-beta" in text and "+gamma" in text
    assert "+hello" in text


def test_undo_of_chosen_turn_refuses_files_changed_later(ws: Path) -> None:
    a = ws / "a.txt"
    a.write_text("v0")
    record = ChangeRecord("s")
    record.next_turn()
    write(record, a, "v1")
    record.next_turn()
    write(record, a, "v2")
    report = record.undo(1)
    assert a.read_text() == "v2"
    assert "changed again in turn 2" in report.text()
    with pytest.raises(UndoError, match="already undone"):
        record.undo(1)


def test_undo_is_itself_undoable(ws: Path) -> None:
    a = ws / "a.txt"
    a.write_text("v0")
    record = ChangeRecord("s")
    record.next_turn()
    write(record, a, "v1")
    record.undo()
    assert a.read_text() == "v0"
    undo_turn = [t for t in record.turns() if t.note.startswith("undo of")][0]
    record.undo(undo_turn.turn)
    assert a.read_text() == "v1"


def test_restore_replaces_a_planted_symlink_instead_of_writing_through(
    ws: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    a = ws / "a.txt"
    a.write_text("v0")
    record = ChangeRecord("s")
    record.next_turn()
    write(record, a, "v1")
    a.unlink()
    a.symlink_to(outside)  # planted after the turn
    record.undo()
    assert outside.read_text() == "precious"
    assert not a.is_symlink() and a.read_text() == "v0"


def test_restore_refuses_a_parent_folder_swapped_for_a_symlink(ws: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sub = ws / "sub"
    sub.mkdir()
    (sub / "f.txt").write_text("v0")
    record = ChangeRecord("s")
    record.next_turn()
    write(record, sub / "f.txt", "v1")
    (sub / "f.txt").unlink()
    sub.rmdir()
    sub.symlink_to(elsewhere, target_is_directory=True)
    report = record.undo()
    assert list(elsewhere.iterdir()) == []
    assert "symlink" in report.text()


def test_shell_changes_are_detected_and_undone(ws: Path) -> None:
    (ws / "keep.txt").write_text("old")
    (ws / "gone.txt").write_text("will be deleted")
    (ws / "d").mkdir()
    (ws / "d" / "inner.txt").write_text("inner")
    record = ChangeRecord("s")
    record.next_turn()
    before = snapshots.take(ws)
    # what a shell command might do
    (ws / "keep.txt").write_text("new and longer")
    (ws / "gone.txt").unlink()
    (ws / "d" / "inner.txt").unlink()
    (ws / "d").rmdir()
    (ws / "made" / "deep").mkdir(parents=True)
    (ws / "made" / "deep" / "x.bin").write_bytes(b"\0\1")
    os.symlink("keep.txt", ws / "link")
    changed = snapshots.record_since(record, before)
    assert "keep.txt" in changed and "gone.txt" in changed and "made/deep/x.bin" in changed

    record.undo()
    assert (ws / "keep.txt").read_text() == "old"
    assert (ws / "gone.txt").read_text() == "will be deleted"
    assert (ws / "d" / "inner.txt").read_text() == "inner"
    assert not (ws / "made").exists()
    assert not (ws / "link").exists()


@pytest.mark.parametrize("kind", ["file", "folder"])
@pytest.mark.parametrize("name", [".co", ".git"])
def test_a_sandbox_placeholder_is_never_a_change_to_undo(ws: Path, name: str, kind: str) -> None:
    """A sandbox holds a missing .git or .co with an empty placeholder while it runs: one
    that comes or goes between two snapshots is not recorded, so /undo never puts one
    back into the project (a closed terminal's leftover ``.co`` was "restored" for good)."""
    placeholder = ws / name
    (ws / "notes.txt").write_text("mine")
    record = ChangeRecord("s")
    record.next_turn()
    before = snapshots.take(ws)
    placeholder.mkdir() if kind == "folder" else placeholder.touch()  # the command starts
    (ws / "notes.txt").write_text("changed")
    assert list(snapshots.record_since(record, before)) == ["notes.txt"]
    record.next_turn()
    before = snapshots.take(ws)
    placeholder.rmdir() if kind == "folder" else placeholder.unlink()  # released
    assert list(snapshots.record_since(record, before)) == []
    record.undo()  # the first turn: notes.txt back, nothing else
    assert sorted(p.name for p in ws.iterdir()) == ["notes.txt"]
    assert (ws / "notes.txt").read_text() == "mine"


def test_big_files_are_listed_as_not_restorable(ws: Path) -> None:
    big = ws / "big.bin"
    big.write_bytes(b"x" * (snapshots.KEEP_FILE_BYTES + 10))
    record = ChangeRecord("s")
    record.next_turn()
    before = snapshots.take(ws)
    big.write_bytes(b"y")
    snapshots.record_since(record, before)
    report = record.undo()
    assert big.read_bytes() == b"y"
    assert "not kept" in report.text()


def test_the_database_is_private(ws: Path) -> None:
    record = ChangeRecord("s")
    record.next_turn()
    write(record, ws / "a", "x")
    assert record.db_path is not None
    assert (record.db_path.stat().st_mode & 0o777) == 0o600


def test_turns_without_writes_touch_no_disk_and_resume_continues(ws: Path, co_dirs: Path) -> None:
    record = ChangeRecord("quiet")
    for _ in range(3):
        record.next_turn()
    assert record.db_path is None or not record.db_path.exists()
    write(record, ws / "a.txt", "x")
    resumed = ChangeRecord("quiet")  # the same session in a new process
    resumed.next_turn()
    write(resumed, ws / "a.txt", "y")
    turns = [t.turn for t in resumed.turns()]
    assert len(turns) == 2 and turns[1] > turns[0]
    resumed.undo()
    assert (ws / "a.txt").read_text() == "x"


def test_snapshot_skips_environments_and_reuses_unchanged_bytes(ws: Path) -> None:
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "node_modules" / "pkg" / "index.js").write_text("x")
    (ws / "src" / ".venv").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("print(1)")
    first = snapshots.take(ws)
    assert set(first.entries) == {"node_modules", "src", "src/main.py"} - {"node_modules"}
    second = snapshots.take(ws)
    assert second.kept["src/main.py"] is first.kept["src/main.py"]  # not read again
    (ws / "src" / "main.py").write_text("print(2)!")
    third = snapshots.take(ws)
    assert third.kept["src/main.py"].data == b"print(2)!"


def test_a_partial_snapshot_only_reports_changes_to_files_it_saw(ws: Path) -> None:
    for i in range(30):
        (ws / f"f{i:02}").write_text("x")
    before = snapshots.take(ws, max_entries=10)
    assert not before.complete
    seen = sorted(before.entries)[0]
    (ws / seen).write_text("changed!")
    (ws / "brand-new").write_text("new")
    after = snapshots.take(ws, keep_contents=False, max_entries=10)
    changed = snapshots.diff(before, after)
    assert all(state.kind != "absent" for state in changed.values())  # no invented creations
    assert seen in changed or seen not in after.entries
