"""Recognising "the request is longer than the model's context window", in any server's words.

Providers say it differently, and most say the numbers: OpenAI and llama-cpp-python
("maximum context length is 8192 tokens. However, you requested 9228 tokens (8972 in the
messages, 256 in the completion)"), llama.cpp's own server (``exceed_context_size_error``
with ``n_prompt_tokens`` and ``n_ctx``), vLLM, Anthropic ("prompt is too long: 208154
tokens > 200000 maximum"), Gemini ("The input token count (1196265) exceeds the maximum
number of tokens allowed (1048575)"), Mistral, xAI, Cohere, OpenRouter, LM Studio,
text-generation-inference. :func:`context_overflow` reads the error
pydantic-ai raised and gives those numbers (each may be unknown), or None for any other
error.
"""

from __future__ import annotations

import json
import re
from typing import Any

from co_core.kernel.errors import CoError
from co_core.sessions.counting import Overflow

# what says "too long for the context", in the servers' words (lower-cased)
SIGNS = (
    "context_length_exceeded",
    "exceed_context_size",
    "maximum context length",
    "context length",
    "context window",
    "context size",
    "context the overflows",  # LM Studio
    "prompt is too long",
    "prompt length",
    "input is too long",
    "input token count",
    "too many tokens",
    "total number of tokens",
    "too large for model",
    "maximum number of tokens",
    "`inputs` tokens",  # text-generation-inference
)
_PROMPT = (
    r"(\d+) in the messages",
    r"(\d+) of text input",
    r"messages resulted in (\d+) tokens",
    r'"n_prompt_tokens":\s*(\d+)',
    r"prompt is too long:\s*(\d+) tokens",
    r"input token count \((\d+)\)",
    r"request has (\d+) input tokens",
    r"request contains (\d+) tokens",
    r"prompt contains (\d+) tokens",
    r"requested tokens \((\d+)\)",
    r"given: (\d+) `inputs` tokens",
    r"keep the first (\d+) tokens",
    r"cannot exceed \d+ - received (\d+)",
)
_WINDOW = (
    r"maximum context length is (\d+)",
    r"maximum prompt length is (\d+)",
    r'"n_ctx":\s*(\d+)',
    r"> (\d+) maximum",
    r"maximum number of tokens allowed \((\d+)\)",
    r"context window of (\d+)",
    r"(\d+) maximum context length",
    r"context length of (\d+)",
    r"must be <= (\d+)",
    r"cannot exceed (\d+)",
)
_REQUESTED = r"you requested (?:about )?(\d+) tokens"
_COMPLETION = r"(\d+) in the (?:completion|output)"


class ContextTooLong(CoError):
    """The request did not fit the model's window, even fitted again with its own count."""


def _text(error: BaseException) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    return f"{error} {body or ''}".lower()


def _first(patterns: tuple[str, ...], text: str) -> int | None:
    for pattern in patterns:
        found = re.search(pattern, text)
        if found:
            return int(found.group(1))
    return None


def context_overflow(error: BaseException) -> Overflow | None:
    """The numbers of a context-length error, or None when ``error`` is something else."""
    status = getattr(error, "status_code", None)
    if not isinstance(status, int) or not 400 <= status < 500:
        return None
    text = _text(error)
    if not any(sign in text for sign in SIGNS):
        return None
    prompt = _first(_PROMPT, text)
    if prompt is None:  # "you requested N tokens" counts the reply's room too
        requested, completion = re.search(_REQUESTED, text), re.search(_COMPLETION, text)
        if requested:
            prompt = int(requested.group(1)) - (int(completion.group(1)) if completion else 0)
    return Overflow(window=_first(_WINDOW, text), prompt_tokens=prompt)


def too_long(model: Any, window: int, needed: int | None) -> ContextTooLong:
    """The one line for a conversation that still does not fit: the window, and what to do."""
    name = getattr(model, "model_name", None) or "the model"
    asked = f" and this request needs {needed:,}" if needed else ""
    return ContextTooLong(
        f"this conversation does not fit {name}'s context window ({window:,} tokens{asked}, "
        "even with older turns left out): /compact summarises them, /clear starts afresh, "
        "or give the model a larger window (local.context_size for the local model)"
    )
