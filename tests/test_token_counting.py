"""Co counts a request as the model will: tiktoken for OpenAI's models (within 5 % of the
exact request's count), a server's own tokenizer in batches that agree with one text at a
time, each text counted once, the estimate when no tokenizer answers, and ``/context``
showing the counter's numbers.

The servers are real HTTP servers (tests/openai_server.py): one reports the prompt tokens
of the exact request it received, counted with tiktoken by OpenAI's published recipe; one
tokenizes as llama.cpp's server does (``/tokenize``), special tokens included.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import threading
from pathlib import Path
from typing import Any

import pytest
from openai_server import Server, send_json
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from sessions_support import tool_turn, turn

from co_core.agent.counting import counter_for
from co_core.agent.counting.server import ServerCounter
from co_core.agent.models import compat_model
from co_core.sessions.context import ContextKeeper
from co_core.sessions.counting import Counting
from co_core.sessions.settings import SessionSettings
from co_core.sessions.tokens import PartSizes, fit


def _encoding(name: str) -> Any:
    """tiktoken's encoding if it can be had here (it is downloaded once), else skip."""
    tiktoken = pytest.importorskip("tiktoken")
    found: list[Any] = []

    def load() -> None:
        with contextlib.suppress(Exception):  # offline: the download fails
            found.append(tiktoken.get_encoding(name))

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(20)
    if not found:
        pytest.skip(f"tiktoken's {name} cannot be loaded here (offline, never downloaded)")
    return found[0]


@pytest.fixture(scope="module")
def o200k() -> Any:
    return _encoding("o200k_base")


def openai_prompt_tokens(body: dict[str, Any], encoding: Any) -> int:
    """OpenAI's recipe for a chat request: 3 tokens a message and every string in it, 3
    for the reply; each tool's JSON."""

    def strings(value: Any) -> int:
        if isinstance(value, str):
            return len(encoding.encode(value))
        if isinstance(value, dict):
            return sum(strings(v) for v in value.values())
        if isinstance(value, list):
            return sum(strings(v) for v in value)
        return 0

    total = 3 + sum(3 + strings(m) for m in body["messages"])
    return total + sum(len(encoding.encode(json.dumps(t))) for t in body.get("tools", []))


def history(turns: int) -> list[Any]:
    messages: list[Any] = []
    for n in range(turns):
        if n % 3:
            messages += tool_turn(
                f"question {n}: where is handler_{n} defined, and what does it return?",
                f"call_{n:04d}abcdef",
                f"src/module_{n}.py:12: def handler_{n}(event): return event.payload\n" * 6,
            )
        else:
            messages += turn(f"Thanks. Tell me about item {n}.", f"Item {n} is a plain value. " * 8)
    return messages


def read_note(name: str) -> str:
    """Read a note from the notes folder."""
    return f"the note {name} says hello"


@pytest.mark.parametrize("turns", [3, 30, 120])
def test_an_openai_models_requests_are_counted_within_5_percent_of_tiktokens_count(
    o200k: Any, turns: int
) -> None:
    usage = lambda body: openai_prompt_tokens(body, o200k)  # noqa: E731
    keeper = ContextKeeper(
        SessionSettings(context_window=4000, reserve_output=500), counting=Counting(counter_for)
    )
    with Server(lambda body: {"text": "ok"}, usage=usage) as server:
        model = OpenAIChatModel(
            "gpt-4o", provider=OpenAIProvider(base_url=server.base_url, api_key="test")
        )
        agent = Agent(model, instructions="You are Co.", capabilities=[keeper.capability()])
        agent.tool_plain(read_note)
        result = agent.run_sync("and the last one?", message_history=history(turns))
    counter = keeper.counting.counter(model)
    assert counter.describe == "counted with tiktoken (o200k_base)"
    [body] = server.requests
    exact = openai_prompt_tokens(body, o200k)
    counted = keeper.meter.last
    assert counted is not None
    assert abs(counted.used - exact) <= 0.05 * exact, (counted.used, exact)
    assert exact <= 4000 - 500  # fitted: the long histories lost their oldest turns
    assert result.usage.input_tokens == exact  # what the server reported, for /context


def llama_tokenizer(encoding: Any) -> Any:
    """llama.cpp's ``/tokenize``: special tokens in the text are parsed as such."""
    return lambda text: encoding.encode(text, allowed_special="all")


ALPHABET = [
    "a", "b", " ", "  ", "\n", "\n\n", "é", "ß", "中文", "🙂", "42", "def", "(", ")", "{", "}",
    '"', "<|", "|>", "<|endof", "text|>", "<|endoftext|>", "<|im_end|>", "\t",
]  # fmt: skip


def generated_texts(seed: int, count: int = 60) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40))) for _ in range(count)]


@pytest.mark.parametrize("seed", range(5))
def test_batched_counts_agree_with_one_text_at_a_time(o200k: Any, seed: int) -> None:
    texts = generated_texts(seed)
    with Server(lambda body: {"text": "ok"}, tokenize=llama_tokenizer(o200k)) as server:
        counter = ServerCounter(server.base_url, "m")
        counts = asyncio.run(counter.count(texts))
        batches = len(server.tokenized)
    assert counts == [len(o200k.encode(t, allowed_special="all")) for t in texts]
    alone = sum("<|endoftext|>" in t for t in texts)  # texts with the marker go alone
    assert batches <= 4 + alone + 3  # probing, then one batch (and the marked texts)


def test_a_long_history_is_counted_once_and_then_only_what_is_new(o200k: Any) -> None:
    messages = history(250)
    with Server(lambda body: {"text": "ok"}, tokenize=llama_tokenizer(o200k)) as server:
        counter = ServerCounter(server.base_url, "m")
        sizes = PartSizes(counter)
        asyncio.run(fit(messages, 3000, sizes=sizes))
        first = len(server.tokenized)
        asyncio.run(fit(messages, 3000, sizes=sizes))
        again = len(server.tokenized) - first
        more = [*messages, *turn("one more", "sure")]
        asyncio.run(fit(more, 3000, sizes=sizes))
        new = server.tokenized[first + again :]
    assert first <= 6  # probing, then the whole history in one batch
    assert again == 0
    assert new == ["one more<|endoftext|>sure"]


def test_without_a_tokenize_endpoint_the_estimate_counts_and_context_says_so(
    tmp_path: Path,
) -> None:
    with Server(lambda body: {"text": "ok"}) as server:
        model = compat_model("m", server.base_url, None, "openai-compatible")
        keeper = ContextKeeper(SessionSettings(context_window=8000), counting=Counting(counter_for))
        agent = Agent(model, instructions="You are Co.", capabilities=[keeper.capability()])
        result = agent.run_sync("hello")
        shown = asyncio.run(keeper.context_text(result.all_messages(), model))
    assert (
        "(estimated: about 4 characters per token; the tokenizer: no tokenize endpoint at" in shown
    )
    assert keeper.counting.counter(model).margin == 0.10  # an estimate keeps a wider margin


def test_context_shows_the_numbers_the_fitting_counted(o200k: Any) -> None:
    with Server(lambda body: {"text": "ok"}, tokenize=llama_tokenizer(o200k)) as server:
        model = compat_model("m", server.base_url, None, "openai-compatible")
        keeper = ContextKeeper(
            SessionSettings(context_window=100_000), counting=Counting(counter_for)
        )
        agent = Agent(model, instructions="You are Co.", capabilities=[keeper.capability()])
        agent.tool_plain(read_note)
        result = agent.run_sync("and now?", message_history=history(12))
        usage = asyncio.run(keeper.usage(result.all_messages()[:-1], model))
        shown = asyncio.run(keeper.context_text(result.all_messages()[:-1], model))
    fitted = keeper.meter.last
    assert (
        fitted is not None
        and fitted.counted_by == "counted with the model's tokenizer (the server's)"
    )
    # nothing was left out, so the history /context measures is what was sent
    assert keeper.meter.last_fit is not None and keeper.meter.last_fit.dropped_turns == 0
    assert (usage.system, usage.tools, usage.history, usage.tool_outputs) == (
        fitted.system,
        fitted.tools,
        fitted.history,
        fitted.tool_outputs,
    )
    assert f"context: {usage.used:,} / 100,000 tokens" in shown
    assert "(counted with the model's tokenizer (the server's))" in shown


class AnthropicStandIn:
    """Anthropic's Messages API as documented, for the two calls Co makes: counting
    (``POST /v1/messages/count_tokens`` -> ``{"input_tokens"}``) and a message. Its
    tokenizer is two characters a token, so Co's estimate undercounts it."""

    def __init__(self, window: int) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.window = window
        self.counted: list[int] = []  # what each count_tokens call answered
        self.sent: list[int] = []  # the tokens of each message request
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                tokens = len(json.dumps(body["messages"])) // 2
                if self.path == "/v1/messages/count_tokens":
                    outer.counted.append(tokens)
                    self._json(200, {"input_tokens": tokens})
                elif self.path == "/v1/messages":
                    outer.sent.append(tokens)
                    if tokens > outer.window:
                        error = f"prompt is too long: {tokens} tokens > {outer.window} maximum"
                        self._json(400, {"type": "error", "error": {
                            "type": "invalid_request_error", "message": error}})  # fmt: skip
                        return
                    self._json(200, {
                        "id": "msg_1", "type": "message", "role": "assistant",
                        "model": body["model"], "content": [{"type": "text", "text": "ok"}],
                        "stop_reason": "end_turn", "stop_sequence": None,
                        "usage": {"input_tokens": tokens, "output_tokens": 1},
                    })  # fmt: skip
                else:
                    self._json(404, {"type": "error", "error": {"type": "not_found_error"}})

            def _json(self, status: int, data: Any) -> None:
                send_json(self, status, data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> AnthropicStandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"


def test_a_provider_with_a_count_endpoint_checks_the_estimate_once_near_the_limit() -> None:
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    keeper = ContextKeeper(
        SessionSettings(context_window=6000, reserve_output=500), counting=Counting(counter_for)
    )
    with AnthropicStandIn(window=6000) as api:
        model = AnthropicModel(
            "claude-test", provider=AnthropicProvider(api_key="x", base_url=api.url)
        )
        agent = Agent(model, capabilities=[keeper.capability()])
        messages = history(60)
        for prompt in ("first?", "second?"):
            messages = agent.run_sync(prompt, message_history=messages).all_messages()
    assert (
        keeper.counting.counter(model).describe
        == "estimated, checked by the provider's token count"
    )
    assert len(api.counted) == 1  # once: then the usage each answer reports corrects it
    assert api.sent and all(tokens <= 6000 - 500 for tokens in api.sent)  # never refused
    assert api.counted[0] > 6000  # the estimate alone would have sent too much


def test_a_failing_tokenizer_is_not_asked_again_at_once() -> None:
    def broken(text: str) -> list[int]:
        raise RuntimeError("tokenizer crashed")

    with Server(lambda body: {"text": "ok"}, tokenize=broken) as server:
        counter = ServerCounter(server.base_url, "m")
        first = asyncio.run(counter.count(["some words here"]))
        asked = len(server.tokenized)
        second = asyncio.run(counter.count(["other words, not counted before"]))
    assert asked == 1 and len(server.tokenized) == 1  # the estimate counted the second batch
    assert first == [4] and second == [8]  # about 4 characters a token
    assert counter.failed and counter.describe.startswith("estimated: about 4 characters")
    assert counter.margin == 0.10
