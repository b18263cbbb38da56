"""Memory that fits the model, compaction and /context, through real agent runs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_core.sessions.compact import ACK, SUMMARY_HEADER, NothingToCompact
from co_core.sessions.context import ContextKeeper
from co_core.sessions.history import pairing_problems
from co_core.sessions.recorder import Recorder
from co_core.sessions.settings import SessionSettings
from co_core.sessions.store import SessionStore
from co_core.sessions.tokens import DROP_NOTE, context_window
from tests.sessions_support import Script, all_text, make_agent, run

BIG = "HEAD-MARK " + "lorem ipsum dolor sit amet " * 2000 + " TAIL-MARK"


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "big.txt").write_text(BIG, encoding="utf-8")
    for n in range(6):
        (folder / f"n{n}.txt").write_text(f"note {n}: the code is {n * 111}", encoding="utf-8")
    return folder


def chat(agent, notes: Path, prompts: list[str], history: list | None = None) -> list:
    history = list(history or [])
    for prompt in prompts:
        history = run(agent, prompt, notes, history).all_messages()
    return history


class Summariser:
    """A scripted summariser model: keeps the transcript it was given."""

    def __init__(self) -> None:
        self.transcripts: list[str] = []

    def __call__(self, messages, info: AgentInfo) -> ModelResponse:
        self.transcripts.append(all_text(messages))
        return ModelResponse(
            parts=[TextPart("The user read notes 0 to 3; the codes were 0, 111, 222, 333.")]
        )


def test_large_old_tool_output_is_trimmed_to_head_and_tail(notes: Path) -> None:
    script = Script()
    memory = ContextKeeper(SessionSettings(trim_tool_output=200, context_window=100_000))
    agent = make_agent(script, [memory.capability()])
    history = chat(agent, notes, ["read big.txt", "hello"])

    sent = script.requests[-1]
    old_output = next(p for m in sent for p in m.parts if isinstance(p, ToolReturnPart))
    assert old_output.content.startswith("HEAD-MARK")
    assert old_output.content.endswith("TAIL-MARK")
    assert "characters of this tool output left out" in old_output.content
    assert len(old_output.content) < 1200
    # the run's own history (and so the store) keeps the full output
    kept = next(p for m in history for p in m.parts if isinstance(p, ToolReturnPart))
    assert kept.content == BIG
    # within the turn that called the tool, the model saw it whole
    assert BIG in all_text(script.requests[1])


def test_oldest_turns_are_dropped_whole_to_fit_the_window(notes: Path) -> None:
    script = Script()
    memory = ContextKeeper(SessionSettings(context_window=512, reserve_output=100))
    agent = make_agent(script, [memory.capability()])
    prompts = [f"read n{n}.txt" for n in range(6)] + ["x" * 600 + " what now?"]
    history = chat(agent, notes, prompts)

    sent = script.requests[-1]
    assert not pairing_problems(sent)  # no call without its return, no leading return
    first = sent[0]
    assert first.kind == "request"
    assert DROP_NOTE.split("}")[1].split(";")[0] in all_text([first])
    assert "note 0" not in all_text(sent)  # the oldest turn went first
    assert "what now?" in all_text(sent)  # the current turn is always whole
    assert memory.meter.last_fit is not None and memory.meter.last_fit.dropped_turns > 0
    assert memory.meter.last.used <= 512 - 100
    assert len(history) == 6 * 4 + 2  # nothing was lost from the conversation itself


def test_compaction_keeps_tool_pairs_valid_for_a_real_run(co_dirs: Path, notes: Path) -> None:
    script = Script()
    agent = make_agent(script)
    with SessionStore() as store:
        recorder = Recorder.start(store, cwd=notes)
        history: list = []
        for n in range(5):
            result = run(agent, f"read n{n}.txt", notes, history)
            history = result.all_messages()
            recorder.save(history, result.usage)
        original = len(history)

        summariser = Summariser()
        memory = ContextKeeper(SessionSettings(keep_recent_turns=2))
        compacted = asyncio.run(memory.compact(history, FunctionModel(summariser), recorder))

        # the summariser was shown the old turns, tool outputs included, not the recent ones
        assert "the code is 222" in summariser.transcripts[0]
        assert "the code is 444" not in summariser.transcripts[0]
        new = compacted.messages
        assert SUMMARY_HEADER in all_text(new[:1]) and ACK in all_text(new[1:2])
        assert len(new) == 2 + 2 * 4
        assert not pairing_problems(new)

        # the compacted history runs through a real agent; the model sees valid pairs
        script.requests.clear()
        result = run(agent, "read n5.txt", notes, new)
        recorder.save(result.all_messages(), result.usage)
        for request in script.requests:
            assert not pairing_problems(request)
            calls = {
                p.tool_call_id for m in request for p in m.parts if isinstance(p, ToolCallPart)
            }
            returns = {
                p.tool_call_id for m in request for p in m.parts if isinstance(p, ToolReturnPart)
            }
            assert calls == returns
        assert "the codes were 0, 111, 222, 333" in all_text(script.requests[0])
        assert "note 0: the code is 0" not in all_text(script.requests[0])

        # resume gives the compacted view; the store still has every original message
        _, resumed = Recorder.resume(store, recorder.info.id)
        assert all_text(resumed) == all_text(result.all_messages())
        full = store.original(recorder.info.id)
        assert len(full) == original + 4
        assert "note 0: the code is 0" in all_text(full)


def test_compacting_twice_stacks_correctly(co_dirs: Path, notes: Path) -> None:
    script = Script()
    agent = make_agent(script)
    memory = ContextKeeper(SessionSettings(keep_recent_turns=1))
    with SessionStore() as store:
        recorder = Recorder.start(store, cwd=notes)
        history: list = []
        for round_ in range(2):
            for n in range(3):
                result = run(agent, f"read n{n + 3 * round_}.txt", notes, history)
                history = result.all_messages()
                recorder.save(history)
            history = asyncio.run(
                memory.compact(history, FunctionModel(Summariser()), recorder)
            ).messages
        _, resumed = Recorder.resume(store, recorder.info.id)
    assert all_text(resumed) == all_text(history)
    assert "note 5: the code is 555" in all_text(resumed)
    assert not pairing_problems(resumed)


def test_a_summary_longer_than_what_it_replaces_is_not_used(co_dirs: Path, notes: Path) -> None:
    """A compaction that would cost context is refused with the reason; nothing changes."""

    def rambling(messages, info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("a long retelling " * 400)])

    history = chat(make_agent(Script()), notes, ["hi", "read n1.txt", "a", "b"])
    with SessionStore() as store:
        recorder = Recorder.start(store, cwd=notes)
        recorder.save(history)
        memory = ContextKeeper(SessionSettings(keep_recent_turns=2))
        with pytest.raises(NothingToCompact, match=r"was not shorter than the \d+ older messages"):
            asyncio.run(memory.compact(history, FunctionModel(rambling), recorder))
        assert store.load(recorder.info.id) == history  # no compaction recorded


def test_nothing_to_compact_is_a_clear_error(notes: Path) -> None:
    history = chat(make_agent(Script()), notes, ["hello"])
    with pytest.raises(NothingToCompact, match="nothing to compact"):
        asyncio.run(ContextKeeper(SessionSettings()).compact(history, FunctionModel(Summariser())))


def test_auto_compaction_suggests_at_half_and_compacts_at_ninety_percent(
    co_dirs: Path, notes: Path
) -> None:
    window = 2000
    memory = ContextKeeper(SessionSettings(context_window=window, keep_recent_turns=1))
    script = Script()
    agent = make_agent(script, [memory.capability()])
    summariser = FunctionModel(Summariser())
    history: list = []
    seen: list[tuple[float, str | None]] = []
    with SessionStore() as store:
        recorder = Recorder.start(store, cwd=notes)
        for n in range(30):
            result = run(agent, f"turn {n}: " + "words " * 40, notes, history)
            history = result.all_messages()
            recorder.save(history)
            fraction = asyncio.run(memory.usage(history)).fraction
            history, note = asyncio.run(memory.after_turn(history, summariser, recorder))
            seen.append((fraction, note))
            if note and "compacted" in note:
                break

    below = [note for fraction, note in seen if fraction < 0.5]
    suggested = [note for fraction, note in seen if 0.5 <= fraction < 0.9]
    compacted = [note for fraction, note in seen if fraction >= 0.9]
    assert below and all(note is None for note in below)
    assert suggested and all("/compact" in note for note in suggested)
    assert compacted and "compacted to" in compacted[0]
    assert asyncio.run(memory.usage(history)).fraction < 0.5  # compaction made room
    assert SUMMARY_HEADER in all_text(history)


def test_context_text_shows_usage_bar_and_breakdown(notes: Path) -> None:
    memory = ContextKeeper(SessionSettings(context_window=8000))
    agent = make_agent(Script(), [memory.capability()])
    history = chat(agent, notes, ["read n1.txt", "thanks"])
    text = asyncio.run(memory.context_text(history))
    lines = text.splitlines()
    assert lines[0].startswith("context: ") and "/ 8,000 tokens" in lines[0]
    assert "█" in lines[0] or "░" in lines[0]
    for label in ("system prompt", "tools", "conversation", "tool outputs", "free"):
        assert any(line.strip().startswith(label) for line in lines), label
    tools_line = next(line for line in lines if line.strip().startswith("tools"))
    assert int(tools_line.split()[-1].replace(",", "")) > 0  # read_note's schema counted


def test_context_window_comes_from_settings_then_profile_then_default() -> None:
    from pydantic_ai.models.test import TestModel

    assert context_window(None, SessionSettings(context_window=4096)) == 4096
    assert context_window(None, SessionSettings()) == 8192
    assert context_window(None, SessionSettings(default_context_window=2048)) == 2048
    model = TestModel(profile={"context_window": 32_000})
    assert context_window(model, SessionSettings()) == 32_000


def test_summariser_request_fits_the_window_even_when_old_turns_are_huge(notes: Path) -> None:
    script = Script()
    history = chat(make_agent(script), notes, ["read big.txt", "read big.txt", "a", "b"])
    summariser = Summariser()
    memory = ContextKeeper(SessionSettings(context_window=1024, reserve_output=100))
    result = asyncio.run(memory.compact(history, FunctionModel(summariser)))
    assert len(summariser.transcripts[0]) <= 1024 * 4
    assert "of the middle left out" in summariser.transcripts[0]
    assert not pairing_problems(result.messages)


def test_thresholds_in_the_wrong_order_are_a_settings_error(co_dirs: Path) -> None:
    from co_core.testing import run_co, write_settings

    write_settings({"sessions": {"suggest_compact_at": 0.95, "auto_compact_at": 0.9}}, co_dirs)
    result = run_co("config", "show")
    assert result.returncode != 0
    assert "suggest_compact_at must not be above auto_compact_at" in result.stderr
    assert "Traceback" not in result.stderr
