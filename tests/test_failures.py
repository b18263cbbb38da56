"""What the user reads when a turn fails: one line with a hint, never a traceback."""

from __future__ import annotations

import httpx
import pytest
from pydantic_ai import exceptions as pe

from co_core.kernel.errors import CoError
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
