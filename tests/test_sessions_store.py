"""The session store with a real SQLite file and a real pydantic-ai agent (scripted model)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart, ToolReturnPart

from co_core.kernel.errors import CoError
from co_core.sessions.history import INTERRUPTED, pairing_problems
from co_core.sessions.recorder import Recorder
from co_core.sessions.store import SessionStore
from tests.sessions_support import Script, all_text, make_agent, run, turn


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "plan.txt").write_text("buy oat milk; call the plumber at 4pm", encoding="utf-8")
    return folder


def test_resume_restores_memory_in_the_next_request(co_dirs: Path, notes: Path) -> None:
    script = Script()
    agent = make_agent(script)
    with SessionStore() as store:
        recorder = Recorder.start(store, cwd=notes, model="function:test")
        history: list = []
        for prompt in ("my name is Ada", "read plan.txt"):
            result = run(agent, prompt, notes, history)
            history = result.all_messages()
            recorder.save(history, result.usage)
        first_id = recorder.info.id

    # a new process: a new store, the latest session of this directory
    with SessionStore() as store:
        found = Recorder.latest(store, cwd=notes)
        assert found is not None
        recorder, history = found
        assert recorder.info.id == first_id
        script.requests.clear()
        result = run(agent, "what did I tell you?", notes, history)
        recorder.save(result.all_messages(), result.usage)
        info = store.get(first_id)

    seen = all_text(script.requests[-1])
    assert "my name is Ada" in seen
    assert "call the plumber at 4pm" in seen  # the earlier tool output is remembered
    assert not pairing_problems(script.requests[-1])
    assert info.turns == 3
    assert info.title == "my name is Ada"
    assert info.requests == 4  # 1 + 2 (tool round trip) + 1
    assert info.messages == len(result.all_messages())


def test_store_file_is_private_and_uses_wal(co_dirs: Path) -> None:
    with SessionStore() as store:
        recorder = Recorder.start(store, model="m")
        recorder.save(turn("hello", "hi"))
        mode = store.db.execute("PRAGMA journal_mode").fetchone()[0]
        path = store.path
    assert mode == "wal"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_latest_is_per_directory_and_prefix_ids_resolve(co_dirs: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    with SessionStore() as store:
        ra = Recorder.start(store, cwd=a)
        ra.save(turn("in a", "ok"))
        rb = Recorder.start(store, cwd=b)
        rb.save(turn("in b", "ok"))
        assert store.latest(a).id == ra.info.id
        assert store.latest(b).id == rb.info.id
        assert store.latest(tmp_path) is None
        assert store.resolve(ra.info.id[:6]).id == ra.info.id
        with pytest.raises(CoError, match="not a session id"):
            store.resolve("../etc")
        with pytest.raises(CoError, match="no session"):
            store.resolve("ffffffffffff0")


def test_ambiguous_prefix_is_one_clear_error(co_dirs: Path) -> None:
    with SessionStore() as store:
        ids = []
        for n in range(40):  # 40 random ids: some share a first hex digit
            recorder = Recorder.start(store)
            recorder.save(turn(f"t{n}", "ok"))
            ids.append(recorder.info.id)
        shared = next(i[0] for i in ids if sum(j[0] == i[0] for j in ids) > 1)
        with pytest.raises(CoError, match="ambiguous"):
            store.resolve(shared)


def test_no_session_is_written_before_its_first_turn(co_dirs: Path) -> None:
    with SessionStore() as store:
        Recorder.start(store)
        assert store.list() == []


def test_dangling_tool_calls_are_answered_on_resume(co_dirs: Path, notes: Path) -> None:
    """A turn cut off after the model asked for a tool."""
    script = Script()
    agent = make_agent(script)
    with SessionStore() as store:
        recorder = Recorder.start(store, cwd=notes)
        result = run(agent, "hello", notes, [])
        history = result.all_messages()
        recorder.save(history)
        cut_off = ModelResponse(parts=[ToolCallPart("read_note", {"name": "plan.txt"}, "call-x")])
        history = [*history, *turn("read plan.txt", "")[:1], cut_off]
        recorder.save(history)  # what a crash mid-turn could leave

    with SessionStore() as store:
        recorder, history = Recorder.latest(store, cwd=notes)
        assert not pairing_problems(history)
        patched = history[-1]
        assert isinstance(patched.parts[0], ToolReturnPart)
        assert patched.parts[0].content == INTERRUPTED
        result = run(agent, "try again", notes, history)  # the provider accepts it
        recorder.save(result.all_messages())
        assert result.output == "echo: try again"
        assert INTERRUPTED in all_text(script.requests[-1])
        # the patch was saved with the next turn: the stored history is valid as is
        assert not pairing_problems(store.load(recorder.info.id, patch=False))


def test_delete_removes_everything_even_from_the_file_bytes(co_dirs: Path) -> None:
    with SessionStore() as store:
        keep = Recorder.start(store)
        keep.save(turn("harmless", "ok"))
        recorder = Recorder.start(store)
        recorder.save(turn("the vault code is 4711-SECRET " + "padding " * 3000, "noted"))
        wal = Path(f"{store.path}-wal")
        assert stat.S_IMODE(wal.stat().st_mode) == 0o600
        store.delete(recorder.info.id)
        assert [s.id for s in store.list()] == [keep.info.id]
        assert store.raw_messages(recorder.info.id) == []
        for path in (store.path, wal):
            if path.exists():
                assert b"4711-SECRET" not in path.read_bytes(), path
