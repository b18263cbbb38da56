"""Session store speed: resume a 1,000-message session, save one turn (run:
``uv run python bench/sessions.py``). Targets: resume <= 150 ms, save one turn <= 5 ms.

The session is realistic: 250 turns of user prompt, tool call, tool return (~1 KB of tool
output) and answer, i.e. 1,000 pydantic-ai messages. "Resume" is what ``co chat --continue``
does after start-up: open the store, find the directory's latest session, load and validate
every message, patch dangling calls. pydantic-ai itself is imported (and its message
adapter built) beforehand, as it is by the time the REPL needs a session.
Uses a private data dir under a temp folder.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

TURNS = 250
RUNS = 20


def make_turn(n: int) -> list:
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    output = f"result {n}: " + "src/module.py:12: def handler(event): return event.payload\n" * 16
    return [
        ModelRequest(parts=[UserPromptPart(f"question {n}: where is the handler defined?")]),
        ModelResponse(parts=[ToolCallPart("search", {"query": f"handler {n}"}, f"call-{n}")]),
        ModelRequest(parts=[ToolReturnPart("search", output, tool_call_id=f"call-{n}")]),
        ModelResponse(parts=[TextPart(f"It is in src/module.py line 12 (turn {n}).")]),
    ]


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values):6.2f} ms, max {max(values):6.2f} ms"


def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    for kind in ("config", "data", "cache"):
        os.environ[f"CO_{kind.upper()}_DIR"] = str(tmp / kind)
    work = tmp / "project"
    work.mkdir()

    started = time.perf_counter()
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    ModelMessagesTypeAdapter.validate_python([])  # build the adapter once, as a run would
    print(
        f"import pydantic-ai messages (not counted): {(time.perf_counter() - started) * 1e3:.0f} ms"
    )

    from co_core.sessions.recorder import Recorder
    from co_core.sessions.store import SessionStore

    store = SessionStore()
    recorder = Recorder.start(store, cwd=work, model="bench")
    history: list = []
    saves = []
    for n in range(TURNS):
        history += make_turn(n)
        t0 = time.perf_counter()
        recorder.save(history)
        saves.append((time.perf_counter() - t0) * 1e3)
    store.close()
    print(
        f"session: {len(history)} messages, {(tmp / 'data' / 'sessions.db').stat().st_size // 1024} KB"
    )

    resumes = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        with SessionStore() as store:
            found = Recorder.latest(store, cwd=work)
        resumes.append((time.perf_counter() - t0) * 1e3)
        assert found is not None and len(found[1]) == len(history)

    with SessionStore() as store:
        recorder, history = Recorder.latest(store, cwd=work)
        turn_saves = []
        for n in range(TURNS, TURNS + RUNS):
            history = [*history, *make_turn(n)]
            t0 = time.perf_counter()
            recorder.save(history)
            turn_saves.append((time.perf_counter() - t0) * 1e3)

    resume_ok = statistics.median(resumes) <= 150
    save_ok = statistics.median(turn_saves) <= 5
    print(
        f"resume 1,000 messages:   {ms(resumes)}  (target <= 150 ms: {'ok' if resume_ok else 'MISSED'})"
    )
    print(
        f"save one turn (4 msgs):  {ms(turn_saves)}  (target <= 5 ms: {'ok' if save_ok else 'MISSED'})"
    )
    print(f"save while growing 0-1000: {ms(saves)}")


if __name__ == "__main__":
    main()
