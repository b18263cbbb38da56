"""Session store speed: resume a 1,000-message session, save one turn; and what fitting a
request of that session costs with each counter (run: ``uv run python bench/sessions.py
[--llama]``). Targets: resume <= 150 ms, save one turn <= 5 ms.

The session is realistic: 250 turns of user prompt, tool call, tool return (~1 KB of tool
output) and answer, i.e. 1,000 pydantic-ai messages. "Resume" is what ``co chat --continue``
does after start-up: open the store, find the directory's latest session, load and validate
every message, patch dangling calls. pydantic-ai itself is imported (and its message
adapter built) beforehand, as it is by the time the REPL needs a session.
Uses a private data dir under a temp folder.

Fitting: Co's own cost before each request of a turn over that session, for the
estimate, tiktoken (if its encoding can be loaded) and, with ``--llama``, the llama.cpp
server of ``--model local`` (started here with SmolLM2): the first request (every part
counted), a request after a new turn (only its parts counted), the same request again.

Accuracy (``--llama``): real requests of that session to SmolLM2 through the ``local``
model, fitted to a few windows. For the request Co sent, its count with the local
model's tokenizer and with the estimate, each against the input tokens llama.cpp
reported; then the same session fitted by the estimate alone: how many requests the
server refused (Co learns from the refusal and sends once more).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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


def fitting(history: list, counters: list[tuple[str, Any]]) -> None:
    from co_core.sessions.tokens import PartSizes, fit

    budget = 6000

    async def timed(messages: list, sizes: Any) -> float:
        t0 = time.perf_counter()
        await fit(messages, budget, sizes=sizes)
        return (time.perf_counter() - t0) * 1e3

    print(f"fitting a request of {len(history)} messages to {budget:,} tokens:")
    for name, counter in counters:
        sizes = PartSizes(counter)
        first = asyncio.run(timed(history, sizes))
        grown, same = [], []
        messages = list(history)
        for n in range(TURNS, TURNS + RUNS):
            messages = [*messages, *make_turn(n)]
            grown.append(asyncio.run(timed(messages, sizes)))
            same.append(asyncio.run(timed(messages, sizes)))
        print(
            f"  {name:<10} first {first:8.1f} ms | after a new turn {ms(grown)} | "
            f"unchanged {ms(same)}"
        )


def counters(with_llama: bool) -> tuple[list[tuple[str, Any]], Any]:
    from co_core.agent.counting.tiktoken_counter import TiktokenCounter
    from co_core.sessions.counting import Counter

    found: list[tuple[str, Any]] = [("estimate", Counter())]
    tiktoken = TiktokenCounter("gpt-4o")
    asyncio.run(tiktoken.count(["warm up"]))
    if tiktoken.failed:
        print(f"tiktoken left out: {tiktoken.failed}")
    else:
        found.append(("tiktoken", tiktoken))
    server = None
    if with_llama:
        from co_core.agent.counting.local import LocalCounter
        from co_core.agent.local import server as local_model

        gguf = local_model.default_gguf()
        if gguf is None:
            print("llama.cpp left out: the local extra is not installed")
        else:
            server = local_model.LocalServer(gguf, startup_timeout=120)
            found.append(("llama.cpp", LocalCounter(server.start())))
    return found, server


def search(query: str) -> str:
    """Search the code for a query."""
    return "nothing found"


def accuracy(history: list, base_url: str, windows: tuple[int, ...] = (2048, 4096, 8192)) -> None:
    """Co's count of real requests against llama.cpp's, with the tokenizer and the estimate."""
    from pydantic_ai import Agent

    from co_core.agent.counting import counter_for
    from co_core.agent.local.constrained import ConstrainedModel
    from co_core.agent.models import compat_model
    from co_core.sessions.context import ContextKeeper
    from co_core.sessions.counting import Counter, Counting
    from co_core.sessions.settings import SessionSettings
    from co_core.sessions.tokens import PartSizes, history_tokens

    class Spy(ConstrainedModel):
        """The ``local`` model, keeping what each attempt was given (refused ones too)."""

        attempts: list[tuple[list, Any]]

        async def request(self, messages: list, settings: Any, params: Any) -> Any:
            self.attempts.append((list(messages), params))
            return await super().request(messages, settings, params)

    def run(counters: Any, window: int) -> tuple[Spy, ContextKeeper, Any]:
        compat = compat_model("local", base_url, None, "llama-cpp", stream_tools=False)
        model = Spy(compat, max_tokens=1)
        model.attempts = []
        section = SessionSettings(context_window=window, reserve_output=256)
        keeper = ContextKeeper(section, counting=Counting(counters))
        agent = Agent(
            model, instructions="You are Co. Answer briefly.", capabilities=[keeper.capability()]
        )
        agent.tool_plain(search)
        try:
            result = agent.run_sync("Say hello.", message_history=history)
        except Exception as exc:  # refused twice: the user would see one line
            return model, keeper, exc
        return model, keeper, result

    async def estimated(messages: list, params: Any) -> int:
        counter = Counter()
        sizes = PartSizes(counter)
        await sizes.prepare(messages)
        system = [p.content for p in (params.instruction_parts or [])]
        prompt, tools = await counter.fixed(system, params.function_tools)
        return prompt + tools + history_tokens(messages, sizes)

    def off(counted: float, real: int) -> str:
        return f"{counted:6,.0f} ({(counted - real) / real:+6.1%})"

    print(f"accuracy on SmolLM2, a request of the {len(history)}-message session fitted to:")
    for window in windows:
        model, keeper, result = run(counter_for, window)
        if isinstance(result, Exception):
            print(f"  {window:>5,}: refused: {str(result).splitlines()[0][:120]}")
            continue
        real = result.usage.input_tokens
        last = keeper.meter.last
        assert last is not None
        sent, params = model.attempts[-1]
        est = asyncio.run(estimated(sent, params))
        print(
            f"  {window:>5,}: llama.cpp counted {real:6,} | tokenizer {off(last.used, real)}"
            f" | estimate {off(est, real)} | attempts {len(model.attempts)}"
        )
    print("the same session fitted by the estimate alone (margin 10 %):")
    for window in windows:
        model, keeper, result = run(lambda m: Counter(), window)
        if isinstance(result, Exception):
            print(f"  {window:>5,}: {len(model.attempts)} attempts, refused: {str(result)[:100]}")
            continue
        print(
            f"  {window:>5,}: {len(model.attempts)} attempt(s), the last one "
            f"{result.usage.input_tokens:,} tokens"
            f"{' (more than the window)' if result.usage.input_tokens > window else ''}"
        )


if __name__ == "__main__":
    if "--only-accuracy" not in sys.argv:
        main()
    history: list = []
    for n in range(TURNS):
        history += make_turn(n)
    chosen, llama = counters("--llama" in sys.argv or "--only-accuracy" in sys.argv)
    try:
        if "--only-accuracy" not in sys.argv:
            fitting(history, chosen)
        if llama is not None and llama.process is not None:
            accuracy(history, llama.base_url)
    finally:
        if llama is not None:
            llama.stop()
