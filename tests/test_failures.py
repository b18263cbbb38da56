"""What the user reads when a turn fails: one line with a hint, never a traceback."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from pydantic_ai import exceptions as pe

from co_core.kernel.errors import CoError
from co_core.testing import run_co
from co_core.ui.failures import describe


@pytest.mark.parametrize(
    "error, starts, hint_word",
    [
        (pe.ModelTimeoutError("m", "read timed out"), "ollama:x timed out", "smaller model"),
        (TimeoutError(), "ollama:x timed out", "try again"),
        (
            pe.ModelConnectionError("m", "Connection refused"),
            "cannot reach ollama:x",
            "ollama serve",
        ),
        (
            pe.UsageLimitExceeded("The next request would exceed the request_limit of 3. More."),
            "turn stopped: The next request would exceed the request_limit of 3",
            "request_limit",
        ),
        (
            pe.UnexpectedModelBehavior("Tool 'x' exceeded max retries count of 3."),
            "a tool kept failing",
            "retries",
        ),
        (CoError("no model available. Pick one of: ..."), "no model available", ""),
    ],
)
def test_one_line_with_hint(error: BaseException, starts: str, hint_word: str) -> None:
    failure = describe(error, "ollama:x")
    assert failure.message.startswith(starts)
    assert hint_word in failure.hint
    assert "\n" not in str(failure)


def test_connection_errors_found_through_the_cause_chain() -> None:
    try:
        try:
            raise httpx.ConnectError("All connection attempts failed")
        except httpx.ConnectError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert describe(outer, "gemini:g").message.startswith("cannot reach gemini:g")


def _ollama(url: str) -> object:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.ollama import OllamaProvider

    return OpenAIChatModel("qwen3:4b", provider=OllamaProvider(base_url=url))


def _compat(url: str) -> object:
    from co_core.agent.models import compat_model

    return compat_model("tiny", url, None, "openai-compatible")


def _local(url: str) -> object:
    from co_core.agent.models import compat_model

    return compat_model("local", url, None, "llama-cpp")


@pytest.mark.parametrize(
    "label, make, url, hint_has, hint_lacks",
    [
        ("ollama:qwen3:4b", _ollama, "http://gpu-box:11434/v1", "ollama serve", "base-url"),
        ("openai-compatible:tiny", _compat, "http://127.0.0.1:8080/v1", "--base-url", "ollama"),
        ("openai-compatible:tiny", _compat, "http://[::1]:9000/v1", "--base-url", "ollama"),
        ("local", _local, "http://127.0.0.1:41234/v1", "local-model.log", "ollama"),
    ],
)
def test_an_unreachable_server_is_named_with_its_url(
    label: str, make: object, url: str, hint_has: str, hint_lacks: str
) -> None:
    failure = describe(pe.ModelConnectionError("m", "Connection error."), label, make(url))  # type: ignore[operator]
    assert failure.message == f"cannot reach {label} at {url}: Connection error."
    assert hint_has in failure.hint and hint_lacks not in failure.hint.lower()
    if "base-url" in hint_has:
        assert url in failure.hint


def test_long_errors_are_cut_at_a_word() -> None:
    words = " ".join(f"word{i}" for i in range(200))
    message = describe(RuntimeError(words)).message
    kept = message.removeprefix("RuntimeError: ")
    assert kept.endswith(" …") and words.startswith(kept[:-2]) and words[len(kept) - 2] == " "


@pytest.mark.parametrize(
    "model, variable",
    [
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
    ],
)
@pytest.mark.parametrize("empty", [False, True], ids=["unset", "empty"])
def test_a_missing_api_key_is_said_in_cos_words(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch, model: str, variable: str, empty: bool
) -> None:
    """Not pydantic-ai's advice to developers ("pass it via AnthropicProvider(api_key=...)",
    "use the built-in test model: Agent('test')") nor the SDK's, and no "bug in Co": which
    variable to set, and the way out."""
    monkeypatch.delenv(variable, raising=False)
    done = run_co("ask", "-m", model, "hi", env={variable: ""} if empty else None)
    assert done.returncode != 0
    [line] = done.stderr.strip().splitlines()
    assert variable in line and "set" in line and "--model" in line
    assert "Provider(" not in line and "Agent(" not in line and "pydantic" not in line.lower()
    assert "bug in Co" not in line and "Missing credentials" not in line


def test_a_missing_sdk_is_said_in_cos_words() -> None:
    from co_core.ui.failures import in_cos_words

    text = (
        "model 'groq:x': Please install the `groq` package to use the Groq provider, you can "
        'use the `groq` optional group — `pip install "pydantic-ai-slim[groq]"`'
    )
    said = in_cos_words(text)
    assert said.startswith("model 'groq:x': Groq models need the `groq` package")
    assert "pydantic-ai-slim[groq]" in said and "optional group" not in said
