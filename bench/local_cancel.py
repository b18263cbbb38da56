"""Ctrl+C during a local model's answer: how long the next request waits for the server.

Co asks its own llama.cpp server (``local``) for whole answers (``stream`` off: a call must
be whole before it is shown, and only a whole answer carries the token usage). A request
cancelled on Co's side (Ctrl+C while "Co is thinking…") is not stopped on the server's:
llama-cpp-python's server checks for a gone client only between streamed chunks, so the
generation runs to ``max_tokens`` and the next request queues behind it. This measures
that wait for a cancelled whole request and a cancelled streamed one (same run,
alternating), with the built-in SmolLM2. Run: ``uv run --all-packages --all-extras
python bench/local_cancel.py``.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time

import httpx

from co_core.agent.local import catalog
from co_core.agent.local import server as local_model

LONG = {
    "messages": [{"role": "user", "content": "Write a very long story about the sea."}],
    "max_tokens": 256,  # the small model's cap in Co
    "temperature": 0.8,
}
SHORT = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}


async def next_wait(base: str, stream: bool) -> float:
    """Seconds until a short request is answered after a long one was cancelled at 1 s."""
    async with httpx.AsyncClient(timeout=300) as client:

        async def long() -> None:
            if stream:
                body = {**LONG, "stream": True}
                async with client.stream("POST", f"{base}/chat/completions", json=body) as r:
                    async for _ in r.aiter_lines():
                        pass
            else:
                await client.post(f"{base}/chat/completions", json=LONG)

        task = asyncio.create_task(long())
        await asyncio.sleep(1.0)
        task.cancel()  # Ctrl+C
        try:
            await task
        except asyncio.CancelledError:
            pass
        began = time.monotonic()
        await client.post(f"{base}/chat/completions", json=SHORT)
        return time.monotonic() - began


async def main(base: str, rounds: int = 3) -> None:
    waits: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(rounds):
        for stream in (False, True):
            waits[stream].append(await next_wait(base, stream))
    whole, streamed = statistics.median(waits[False]), statistics.median(waits[True])
    print(f"next request after a cancelled whole answer:    {whole:.2f} s (median of {rounds})")
    print(f"next request after a cancelled streamed answer: {streamed:.2f} s")
    print(f"ratio: {whole / streamed:.1f}x")


if __name__ == "__main__":
    model = catalog.built_in()
    assert model is not None, "needs co-core[local] (the built-in SmolLM2)"
    with tempfile.TemporaryDirectory(prefix="co-bench-") as data:
        import os

        os.environ["CO_DATA_DIR"] = data
        server = local_model.LocalServer(model, context_size=2048, startup_timeout=120)
        try:
            asyncio.run(main(server.start()))
        finally:
            server.stop()
