"""Counting with the tokenizer of the server that runs the model (llama.cpp, vLLM).

OpenAI-compatible servers that run a model themselves can tokenize with it:
llama-cpp-python at ``/extras/tokenize`` (``{"input"}``), llama.cpp's own server and vLLM
at ``/tokenize`` (``{"content"}``, ``{"prompt"}``). The first count finds which one
answers; a server with none is counted by the estimate, and ``/context`` says so.

Counting a long history one text per request would take seconds, so a batch goes in one
request: the texts joined by one of the model's special tokens (the end-of-turn marker of
its chat template), which the tokenizer never merges with its neighbours, and the tokens
split at it again. The marker is checked once (``a<marker>b`` must be exactly the tokens
of ``a``, one token, the tokens of ``b``); a text containing it is counted on its own.

Around each chat message the server's chat template adds a few tokens (``<|im_start|>
user\\n … <|im_end|>\\n`` is five); Co counts five per message and three for the reply's
header, and corrects the rest from the input tokens the server reports
(co_core.sessions.counting).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from co_core.agent.counting.wire import wire_text
from co_core.sessions.counting import TokenizerCounter

FRAME = 5  # tokens a chat template adds around one message (role header, end marker)
REPLY_FRAME = 3  # the assistant header that opens the reply
# End-of-turn and end-of-text markers of common chat templates (ChatML, Llama 3, Gemma,
# Phi, Mistral): the first that the model's vocabulary has as one special token joins
# a batch.
MARKERS = (
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<end_of_turn>",
    "<|end|>",
    "</s>",
    "<eos>",
)
BATCH_CHARS = 256_000  # characters per tokenize request
TIMEOUT = 10.0


@dataclass(frozen=True)
class Endpoint:
    """One server's tokenize endpoint: where, and the body's field for the text."""

    url: str
    field: str
    extra: tuple[tuple[str, Any], ...] = ()

    def body(self, text: str) -> dict[str, Any]:
        return {self.field: text, **dict(self.extra)}


def endpoints(base_url: str, model_name: str) -> list[Endpoint]:
    """Where a server at ``base_url`` (its ``/v1`` URL) may tokenize, in the order tried."""
    root = base_url.rstrip("/")
    if root.endswith("/v1"):
        root = root[:-3]
    return [
        Endpoint(f"{root}/extras/tokenize", "input"),  # llama-cpp-python
        Endpoint(f"{root}/tokenize", "content"),  # llama.cpp's server
        Endpoint(f"{root}/tokenize", "prompt", (("model", model_name),)),  # vLLM
    ]


class NoTokenizer(Exception):
    """The server has no tokenize endpoint Co knows."""


class ServerCounter(TokenizerCounter):
    """Counts with the tokenizer of the server at ``base_url``."""

    request_frame = REPLY_FRAME
    tool_frame = 2

    def __init__(self, base_url: str, model_name: str = "", api_key: str | None = None) -> None:
        super().__init__()
        self.base_url, self.model_name = base_url, model_name
        # the server's own key (a llama.cpp or vLLM server started with --api-key)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.label = "counted with the model's tokenizer (the server's)"
        self._endpoint: Endpoint | None = None
        self._marker: tuple[str, int] | None = None  # joins a batch: (text, its token id)
        self._empty = 0  # tokens the endpoint adds to any text (a BOS)
        self._missing: str | None = None  # no endpoint: the estimate, for good

    def part_text(self, part: Any) -> str:
        return wire_text(part)

    def frame(self, message: Any) -> int:
        if message.kind == "response":
            calls = sum(1 for p in message.parts if p.part_kind == "tool-call")
            return FRAME + calls
        return FRAME * len(message.parts)

    def system_frame(self, texts: Sequence[str]) -> int:
        return FRAME * len([t for t in texts if t])

    async def tokenize(self, texts: list[str]) -> list[int]:
        import httpx

        if self._missing:
            raise NoTokenizer(self._missing)
        # an SSL context takes ~50 ms to make: only a server reached over https needs one
        secure = self.base_url.startswith("https:")
        async with httpx.AsyncClient(
            timeout=TIMEOUT, verify=secure, headers=self._headers
        ) as client:
            if self._endpoint is None:
                await self._find(client)
            if self._marker is None:
                return [await self._one(client, t) for t in texts]
            return await self._batched(client, texts)

    async def _tokens(self, client: Any, text: str, endpoint: Endpoint | None = None) -> list[int]:
        endpoint = endpoint or self._endpoint
        assert endpoint is not None
        response = await client.post(endpoint.url, json=endpoint.body(text))
        response.raise_for_status()
        tokens = response.json()["tokens"]
        if not isinstance(tokens, list):
            raise ValueError(f"{endpoint.url} answered without a token list")
        return [t if isinstance(t, int) else t.get("id", 0) for t in tokens]

    async def _one(self, client: Any, text: str) -> int:
        return len(await self._tokens(client, text)) - self._empty

    async def _find(self, client: Any) -> None:
        """The endpoint that answers, what it adds to every text, and a batch marker."""
        import httpx

        for endpoint in endpoints(self.base_url, self.model_name):
            try:
                empty = await self._tokens(client, "", endpoint)
            except (httpx.HTTPStatusError, KeyError, ValueError, TypeError):
                continue
            self._endpoint, self._empty = endpoint, len(empty)
            break
        else:
            self._missing = f"no tokenize endpoint at {self.base_url}"
            raise NoTokenizer(self._missing)
        a, b = await self._one(client, "a"), await self._one(client, "b")
        for marker in MARKERS:
            joined = await self._tokens(client, f"a{marker}b")
            body = joined[self._empty :]
            if len(body) == a + 1 + b:
                self._marker = (marker, body[a])
                return

    async def _batched(self, client: Any, texts: list[str]) -> list[int]:
        assert self._marker is not None
        marker, marker_id = self._marker
        counts: list[int | None] = [None] * len(texts)
        alone = [i for i, t in enumerate(texts) if marker in t]
        for i in alone:
            counts[i] = await self._one(client, texts[i])
        for chunk in _chunks([i for i, t in enumerate(texts) if marker not in t], texts):
            tokens = (await self._tokens(client, marker.join(texts[i] for i in chunk)))[
                self._empty :
            ]
            pieces = _split(tokens, marker_id)
            if len(pieces) != len(chunk):  # a text the marker did not split as it should
                for i in chunk:
                    counts[i] = await self._one(client, texts[i])
                continue
            for i, piece in zip(chunk, pieces, strict=True):
                counts[i] = piece
        return [c or 0 for c in counts]


def _chunks(indexes: list[int], texts: list[str]) -> list[list[int]]:
    chunks: list[list[int]] = []
    size = 0
    for i in indexes:
        if not chunks or size + len(texts[i]) > BATCH_CHARS:
            chunks.append([])
            size = 0
        chunks[-1].append(i)
        size += len(texts[i]) + 12
    return chunks


def _split(tokens: list[int], marker_id: int) -> list[int]:
    """Lengths of the runs of ``tokens`` between ``marker_id``s."""
    lengths, run = [], 0
    for token in tokens:
        if token == marker_id:
            lengths.append(run)
            run = 0
        else:
            run += 1
    lengths.append(run)
    return lengths
