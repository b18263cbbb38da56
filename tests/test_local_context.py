"""A long session on the real local model (llama.cpp + SmolLM2-135M): counted with the
model's own tokenizer, so every request fits, and ``co chat --continue`` answers.

The 4-characters-a-token estimate undercounts SmolLM2 by about a third; before Co counted
with the server's tokenizer, a resumed 1,000-message session failed every turn with
"maximum context length is 8192 tokens. However, you requested 9228".
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from llama_support import NEEDS_SMOLLM2, smollm2_server
from pydantic_ai import Agent
from sessions_support import searched_turns

from co_core.agent.counting import counter_for
from co_core.agent.local.constrained import ConstrainedModel
from co_core.agent.models import compat_model
from co_core.sessions.context import ContextKeeper
from co_core.sessions.counting import Counter, Counting
from co_core.sessions.settings import SessionSettings
from co_core.sessions.tokens import PartSizes, history_tokens
from co_core.testing import write_settings

CO = str(Path(sys.executable).parent / "co")
WINDOW = 2048  # small: a CPU reads the whole prompt before answering

pytestmark = NEEDS_SMOLLM2


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's server with SmolLM2, as ``local`` runs it, on a small window."""
    with smollm2_server(tmp_path_factory.mktemp("llama-data"), context_size=WINDOW) as url:
        yield url


def search(query: str) -> str:
    """Search the code for a query."""
    return "nothing found"


def test_the_fitted_request_is_counted_within_5_percent_of_smollm2s_own_count(llama: str) -> None:
    model = ConstrainedModel(
        compat_model("local", llama, None, "llama-cpp", stream_tools=False), max_tokens=16
    )
    keeper = ContextKeeper(
        SessionSettings(context_window=WINDOW, reserve_output=256), counting=Counting(counter_for)
    )
    agent = Agent(
        model,
        instructions="You are Co, a helpful assistant in the user's terminal. Answer briefly.",
        capabilities=[keeper.capability()],
    )
    agent.tool_plain(search)
    result = agent.run_sync("Say hello.", message_history=searched_turns())

    assert result.usage.requests == 1  # it fitted at the first attempt
    reported = result.usage.input_tokens  # llama.cpp's usage.prompt_tokens
    counted = keeper.meter.last
    assert counted is not None
    assert counted.counted_by == "counted with the local model's tokenizer (llama.cpp)"
    assert abs(counted.used - reported) <= 0.05 * reported, (counted.used, reported)
    assert reported < WINDOW
    # the estimate would have been far off: why requests used to be refused
    fit = keeper.meter.last_fit
    assert fit is not None and fit.dropped_turns > 200
    kept = searched_turns()[fit.dropped_turns * 4 :]
    estimated = history_tokens(kept, PartSizes(Counter()))
    assert estimated < 0.8 * history_tokens(kept, keeper.counting.sizes(model))


@pytest.fixture
def long_session(testplug: Path, tmp_path: Path) -> Path:
    """A 1,000-message session of ``work/`` in the store, as if saved over many days."""
    from co_core.sessions.recorder import Recorder
    from co_core.sessions.store import SessionStore

    work = tmp_path / "work"
    work.mkdir()
    messages = searched_turns()
    with SessionStore() as store:
        recorder = Recorder.start(store, cwd=work, model="local:smollm2")
        for end in range(4, len(messages) + 1, 4):  # one save a turn, as co chat saves
            recorder.save(messages[:end])
    # room for a short reply only, as in a long chat: the history gets most of the window
    sessions = {"context_window": WINDOW, "reserve_output": 256}
    write_settings({"local": {"context_size": WINDOW}, "sessions": sessions}, testplug)
    return work


def test_co_chat_continue_answers_on_local_after_1000_messages(long_session: Path) -> None:
    env = {**os.environ, "CO_REQUEST_LIMIT": "2"}
    child = pexpect.spawn(
        CO, ["chat", "--continue", "-m", "local:smollm2"],
        env=env, cwd=str(long_session), encoding="utf-8", timeout=900, dimensions=(40, 120),
    )  # fmt: skip
    child.logfile_read = open(long_session.parent / "pty.log", "w")  # noqa: SIM115
    try:
        child.expect("resumed .* \\(250 turns\\)")
        child.expect("co>")
        child.sendline("Say hello.")
        child.expect(["out tokens", "error"])
        answered = child.before + child.after
        assert child.after == "out tokens", answered
        assert "maximum context length" not in answered and "Traceback" not in answered
        child.expect("co>")  # after the answer Co compacts the long history (a second request)
        assert "error" not in child.before and "Traceback" not in child.before
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        if child.isalive():
            child.terminate(force=True)
