"""A request the model finds too long: recognised in each server's words, fitted again with
the model's own count and sent once more; a second refusal is one line naming the window.

Driven through a real OpenAI-compatible HTTP server (tests/openai_server.py) that counts
the request with its own tokenizer (a number of characters per token) and answers the
error bodies the real servers send.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from office_plugin import office_and_mail
from openai_server import Server
from pydantic_ai.exceptions import ModelHTTPError
from sessions_support import tool_turn

from co_core.agent.models import compat_model
from co_core.sessions.compact import SUMMARY_HEADER
from co_core.sessions.context import ContextKeeper
from co_core.sessions.overflow import ContextTooLong, context_overflow
from co_core.sessions.settings import SessionSettings
from co_core.testing import run_turn
from co_core.ui.failures import describe

pytestmark = pytest.mark.usefixtures("co_dirs")

WINDOW = 3000
Body = Callable[[int, int, int], dict[str, Any]]


# -- the error bodies real servers send ----------------------------------------------------


def llama_cpp_python(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "error": {
            "message": f"This model's maximum context length is {window} tokens. However, you "
            f"requested {prompt + completion} tokens ({prompt} in the messages, {completion} in "
            "the completion). Please reduce the length of the messages or completion.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


def openai_classic(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "error": {
            "message": f"This model's maximum context length is {window} tokens. However, your "
            f"messages resulted in {prompt} tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


def openai_current(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "error": {
            "message": "Your input exceeds the context window of this model. Please adjust your "
            "input and try again.",
            "type": "invalid_request_error",
            "param": "input",
            "code": "context_length_exceeded",
        }
    }


def llama_server(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": prompt,
            "n_ctx": window,
        }
    }


def vllm(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "object": "error",
        "message": f"This model's maximum context length is {window} tokens. However, your "
        f"request has {prompt} input tokens. Please reduce the length of the input messages.",
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }


def anthropic(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": f"prompt is too long: {prompt} tokens > {window} maximum",
        },
    }


def gemini(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "error": {
            "code": 400,
            "message": f"The input token count ({prompt}) exceeds the maximum number of tokens "
            f"allowed ({window}).",
            "status": "INVALID_ARGUMENT",
        }
    }


def mistral(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "object": "error",
        "message": f"Prompt contains {prompt} tokens and 0 draft tokens, too large for model "
        f"with {window} maximum context length",
        "type": "invalid_request_error",
        "code": None,
    }


def xai(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "code": "Client specified an invalid argument",
        "error": f"This model's maximum prompt length is {window} but the request contains "
        f"{prompt} tokens.",
    }


def openrouter(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "error": {
            "message": f"This endpoint's maximum context length is {window} tokens. However, you "
            f"requested about {prompt + completion} tokens ({prompt} of text input, "
            f"{completion} in the output). Please reduce the length of either one.",
            "code": 400,
        }
    }


def text_generation_inference(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "error": f"Input validation error: `inputs` tokens + `max_new_tokens` must be <= "
        f"{window}. Given: {prompt} `inputs` tokens and {completion} `max_new_tokens`",
        "error_type": "validation",
    }


def cohere(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "message": f"too many tokens: total number of tokens in the prompt cannot exceed "
        f"{window} - received {prompt}. Try using a shorter prompt"
    }


def lm_studio(window: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "error": f"Trying to keep the first {prompt} tokens when context the overflows. "
        f"However, the model is loaded with context length of {window} tokens, which is not "
        "enough. Try to load the model with a larger context length, or provide a shorter input"
    }


WITH_NUMBERS = [
    llama_cpp_python,
    openai_classic,
    llama_server,
    vllm,
    anthropic,
    gemini,
    mistral,
    xai,
    openrouter,
    text_generation_inference,
    cohere,
    lm_studio,
]


def _request_tokens(body: dict[str, Any], chars_per_token: float) -> int:
    """The test server's tokenizer: a fixed number of characters a token."""
    chars = sum(
        len(m.get("content") or "") + len(json.dumps(m.get("tool_calls") or ""))
        for m in body["messages"]
    )
    return int(chars / chars_per_token)


def counting_server(
    error: Body, chars_per_token: float, window: int = WINDOW, always: bool = False
) -> Server:
    def script(body: dict[str, Any]) -> dict[str, Any]:
        prompt = _request_tokens(body, chars_per_token)
        if always or prompt >= window:
            return {"status": 400, "body": error(window, prompt, body.get("max_tokens") or 0)}
        return {"text": "it fits now"}

    return Server(script)


def long_history(turns: int = 40) -> list[Any]:
    history: list[Any] = []
    for n in range(turns):
        history += tool_turn(f"question {n}: " + "words " * 20, f"call-{n}", "line\n" * 60)
    return history


SETTINGS = {"sessions": {"context_window": WINDOW, "reserve_output": 200}}


def model(server: Server) -> Any:
    return compat_model("m", server.base_url, None, "openai-compatible")


def turn_requests(server: Server) -> list[dict[str, Any]]:
    """The requests of the turn (after it, Co compacts: the summariser's are left out)."""
    return [r for r in server.requests if "Transcript to summarise" not in json.dumps(r)]


# -- recognising the error ------------------------------------------------------------------


def _http_error(body: dict[str, Any], status: int = 400) -> ModelHTTPError:
    return ModelHTTPError(status_code=status, model_name="m", body=body)


@pytest.mark.parametrize("error", WITH_NUMBERS, ids=lambda f: f.__name__)
def test_each_servers_words_give_the_window_and_the_prompts_tokens(error: Body) -> None:
    found = context_overflow(_http_error(error(8192, 8972, 256)))
    assert found is not None
    assert found.prompt_tokens == 8972
    assert found.window == 8192


def test_an_error_without_numbers_is_still_recognised() -> None:
    found = context_overflow(_http_error(openai_current(8192, 9000, 0)))
    assert found is not None and found.prompt_tokens is None and found.window is None


@pytest.mark.parametrize(
    "status, body",
    [
        (401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}),
        (
            404,
            {"error": {"message": "The model `gpt-9` does not exist", "code": "model_not_found"}},
        ),
        (400, {"error": {"message": "Invalid value for 'temperature'", "param": "temperature"}}),
        (500, {"error": {"message": "maximum context length is 8192 tokens (internal)"}}),
        (429, {"error": {"message": "Rate limit reached for requests", "code": "rate_limit"}}),
    ],
)
def test_other_errors_are_not_taken_for_a_long_context(status: int, body: dict[str, Any]) -> None:
    assert context_overflow(_http_error(body, status)) is None


# -- fitting again and sending once more -----------------------------------------------------


@pytest.mark.parametrize(
    "error, chars_per_token",
    # without numbers Co counts a quarter more: enough when its estimate is only a little short
    [(f, 2) for f in WITH_NUMBERS] + [(openai_current, 2.6)],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_a_request_the_model_finds_too_long_is_fitted_with_its_count_and_sent_again(
    error: Body, chars_per_token: float, tmp_path: Path
) -> None:
    # the server's tokens are 2 (or 2.6) characters: Co's estimate of 4 undercounts it
    with (
        counting_server(error, chars_per_token) as server,
        office_and_mail(SETTINGS, tmp_path) as app,
    ):
        turn = run_turn(app, "and now?", model(server), history=long_history())
    assert turn.output == "it fits now"
    first, second = turn_requests(server)
    assert _request_tokens(first, chars_per_token) >= WINDOW
    assert _request_tokens(second, chars_per_token) < WINDOW
    assert len(second["messages"]) < len(first["messages"])
    sent = json.dumps(second["messages"])
    assert "earlier turn(s) of this conversation were left out" in sent
    assert "and now?" in sent  # the current turn is whole
    # then, the history being far over the window, Co compacted it as after any turn
    assert SUMMARY_HEADER in str(turn.messages[0].parts[0].content)
    assert "and now?" in str(turn.messages[-2].parts[0].content)


@pytest.mark.parametrize("error", [llama_cpp_python, openai_current], ids=lambda f: f.__name__)
def test_a_second_refusal_is_one_line_naming_the_window_and_what_to_do(
    error: Body, tmp_path: Path
) -> None:
    with (
        counting_server(error, 2, always=True) as server,
        office_and_mail(SETTINGS, tmp_path) as app,
    ):
        with pytest.raises(ContextTooLong) as raised:
            run_turn(app, "and now?", model(server), history=long_history())
    assert len(turn_requests(server)) == 2  # sent once more, not again and again
    line = str(describe(raised.value, "m"))
    assert "\n" not in line
    assert "context window (3,000 tokens" in line
    assert "/compact" in line and "/clear" in line
    assert "API key" not in line and "model name" not in line


def test_other_http_errors_are_not_retried(tmp_path: Path) -> None:
    body = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
    with (
        Server(lambda b: {"status": 401, "body": body}) as server,
        office_and_mail(SETTINGS, tmp_path) as app,
    ):
        with pytest.raises(ModelHTTPError):
            run_turn(app, "hello", model(server))
    assert len(server.requests) == 1


# -- /compact ---------------------------------------------------------------------------------


def test_compact_cuts_the_transcript_to_the_models_count_and_asks_once_more() -> None:
    # the summariser's transcript is cut by Co's estimate (4 characters a token), but the
    # server counts 2: the first request is refused, the second, cut by its numbers, fits
    def script(body: dict[str, Any]) -> dict[str, Any]:
        prompt = _request_tokens(body, 2)
        if prompt >= WINDOW:
            return {"status": 400, "body": llama_cpp_python(WINDOW, prompt, 0)}
        return {"text": "The user asked forty questions; each tool printed lines."}

    keeper = ContextKeeper(SessionSettings(context_window=WINDOW, reserve_output=200))
    with Server(script) as server:
        result = asyncio.run(keeper.compact(long_history(), model(server)))
    assert "forty questions" in result.text
    first, second = server.requests
    assert _request_tokens(first, 2) >= WINDOW > _request_tokens(second, 2)
    assert "of the middle left out" in json.dumps(second["messages"])


def test_compact_refused_twice_is_the_same_one_line() -> None:
    def script(body: dict[str, Any]) -> dict[str, Any]:
        return {"status": 400, "body": llama_server(WINDOW, WINDOW + 500, 0)}

    keeper = ContextKeeper(SessionSettings(context_window=WINDOW, reserve_output=200))
    with Server(script) as server, pytest.raises(ContextTooLong, match="3,000 tokens"):
        asyncio.run(keeper.compact(long_history(), model(server)))
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    "error", [llama_cpp_python, anthropic, openai_current], ids=lambda f: f.__name__
)
def test_a_context_error_reaching_the_user_is_not_blamed_on_the_model_name_or_key(
    error: Body,
) -> None:
    line = str(describe(_http_error(error(8192, 9000, 256)), "local"))
    assert line.startswith("the conversation is longer than local's context window")
    assert "/compact" in line and "API key" not in line and "\n" not in line
    if error is not openai_current:
        assert "(8,192 tokens)" in line
