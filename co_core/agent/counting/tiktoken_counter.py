"""Counting for OpenAI's models with tiktoken, OpenAI's own tokenizer library.

tiktoken (which pydantic-ai's ``openai`` extra installs) is imported only when an OpenAI
model is used; without it, or while its encoding file cannot be had (the first use
downloads it, once, into tiktoken's cache), the estimate counts and ``/context`` says why.
The encoding is loaded in a thread of its own, so a slow download never holds a request.

Framing follows OpenAI's published recipe for chat messages: three tokens per message plus
its role, three for the reply's header; a tool result carries its call id, a tool call its
id, type, name and JSON arguments.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from co_core.agent.counting.wire import wire_text
from co_core.sessions.counting import TokenizerCounter

PER_MESSAGE = 4  # "<|start|>{role}\n … <|end|>": three tokens and the role
REPLY = 3
LOAD_WAIT = 5.0  # seconds a request waits for the encoding before the estimate counts it
DEFAULT_ENCODING = "o200k_base"  # OpenAI's models since gpt-4o
BATCH = 64  # texts from which tiktoken's threaded batch pays


def encoding_name(model_name: str) -> str:
    try:
        from tiktoken.model import encoding_name_for_model

        return encoding_name_for_model(model_name)
    except (ImportError, KeyError):
        return DEFAULT_ENCODING


class TiktokenCounter(TokenizerCounter):
    request_frame = REPLY
    tool_frame = 8  # OpenAI renders functions in a namespace: a few tokens each

    def __init__(self, model_name: str) -> None:
        super().__init__()
        self.encoding_name = encoding_name(model_name)
        self.label = f"counted with tiktoken ({self.encoding_name})"
        self._encoding: Any = None
        self._error: str | None = None
        self._loaded = threading.Event()
        self._loader: threading.Thread | None = None
        self._waited = False

    def part_text(self, part: Any) -> str:
        text = wire_text(part)
        call_id = getattr(part, "tool_call_id", None)
        if part.part_kind in ("tool-return", "tool-call") or (
            part.part_kind == "retry-prompt" and part.tool_name
        ):
            return f"{call_id} {text}"
        return text

    def tool_text(self, tool: Any) -> str:
        import json

        function = {
            "name": tool.name,
            "description": tool.description or "",
            "parameters": tool.parameters_json_schema,
        }
        return json.dumps({"type": "function", "function": function})

    def frame(self, message: Any) -> int:
        if message.kind == "response":
            calls = sum(1 for p in message.parts if p.part_kind == "tool-call")
            return PER_MESSAGE + calls  # each call's "function" type
        return PER_MESSAGE * len(message.parts)

    def system_frame(self, texts: Sequence[str]) -> int:
        return PER_MESSAGE * len([t for t in texts if t])

    def _load(self) -> None:
        try:
            import tiktoken

            self._encoding = tiktoken.get_encoding(self.encoding_name)
        except Exception as exc:  # offline on first use, or tiktoken missing
            self._error = f"tiktoken could not load {self.encoding_name}: {exc}".splitlines()[0]
        finally:
            self._loaded.set()

    async def tokenize(self, texts: list[str]) -> list[int]:
        import asyncio

        if self._loader is None:
            self._loader = threading.Thread(target=self._load, name="co-tiktoken", daemon=True)
            self._loader.start()
        if not self._loaded.is_set() and not self._waited:  # only the first request waits
            self._waited = True
            await asyncio.to_thread(self._loaded.wait, LOAD_WAIT)
        if self._error:
            raise RuntimeError(self._error)
        if self._encoding is None:
            raise TimeoutError(f"tiktoken is still loading {self.encoding_name}")
        if len(texts) < BATCH:  # a few new parts: threads would cost more than they save
            return [len(self._encoding.encode_ordinary(text)) for text in texts]
        return [len(tokens) for tokens in self._encoding.encode_ordinary_batch(texts)]
