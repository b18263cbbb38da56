"""Turn what can go wrong during a turn into one readable line plus a hint."""

from __future__ import annotations

import asyncio
import re
import textwrap
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Failure:
    message: str
    hint: str = ""

    def __str__(self) -> str:
        return f"{self.message} (hint: {self.hint})" if self.hint else self.message


# pydantic-ai's words for a missing key or SDK, written for a developer ("pass it via
# AnthropicProvider(api_key=...)", "use the built-in test model: Agent('test')")
_NO_KEY = re.compile(
    r"Set the `(?P<env>\w+)` environment variable or pass it via `\w+\(api_key=\.\.\.\)` "
    r"to use the (?P<provider>.+?) provider\..*",
    re.DOTALL,
)
_NO_CREDENTIALS = re.compile(  # the openai SDK's, when the variable is set but empty
    r"(?:\w+Error: )?Missing credentials\. .*?set the `(?P<env>\w+)`.*", re.DOTALL
)
_NO_SDK = re.compile(
    r"Please install the `(?P<package>[\w.-]+)` package to use the (?P<provider>.+?) provider, "
    r"you can use the `(?P<group>[\w-]+)` optional group.*",
    re.DOTALL,
)


def in_cos_words(text: str) -> str:
    """A line as Co says it: a library's advice to developers, rewritten for the user."""
    if found := _NO_CREDENTIALS.search(text):
        env = found["env"]
        said = (
            f"{env} holds no API key: set it to yours (`export {env}=…`) in the environment "
            "Co runs in, or choose another model with --model"
        )
        return text[: found.start()] + said
    if found := _NO_KEY.search(text):
        env, provider = found["env"], found["provider"]
        said = (
            f"{provider} needs an API key: set {env} in the environment Co runs in "
            f"(`export {env}=…`), or choose another model with --model"
        )
        return text[: found.start()] + said
    if found := _NO_SDK.search(text):
        package, provider, group = found["package"], found["provider"], found["group"]
        said = (
            f"{provider} models need the `{package}` package, which this Co does not have: "
            f'install "pydantic-ai-slim[{group}]" where Co is installed, or choose another '
            "model with --model"
        )
        return text[: found.start()] + said
    return text


def _first_line(exc: BaseException, width: int = 300) -> str:
    """The error's first line, cut at a word (never mid-word) when it is long."""
    text = str(exc).strip()
    if not text:
        return type(exc).__name__
    return textwrap.shorten(text.splitlines()[0], width, placeholder=" …")


def _unreachable(exc: BaseException, label: str, model: Any) -> Failure:
    """A model server that does not answer: named with its URL, and a hint for its kind."""
    url = _safe(model, "base_url")
    system = _safe(model, "system") or label.partition(":")[0]
    where = f" at {url}" if url else ""
    if system == "ollama":
        hint = f"is Ollama running{where}? start it with `ollama serve`, or choose another model with --model"
    elif system == "llama-cpp":
        hint = (
            "the local model server Co started has stopped; see local-model.log in Co's data folder"
        )
    elif system == "openai-compatible" or (url and not url.startswith("https://")):
        hint = (
            f"is the server{where} running? check --base-url (or the base_url setting), "
            "or choose another model with --model"
        )
    else:
        hint = "check your network connection, or choose another model with --model"
    return Failure(f"cannot reach {label}{where}: {_first_line(exc)}", hint)


def _safe(model: Any, name: str) -> str:
    try:
        value = getattr(model, name, None)
    except Exception:  # a property that cannot be worked out: said without it
        return ""
    return value.rstrip("/") if isinstance(value, str) else ""


def describe(exc: BaseException, model_label: str = "the model", model: Any = None) -> Failure:
    """One line for the user; never a traceback. ``model`` (the pydantic-ai model) lets a
    connection failure name the server's URL."""
    failure = _described(exc, model_label, model)
    said = in_cos_words(failure.message)
    if said != failure.message:  # a known misstep of the user's, not a bug: no hint needed
        return Failure(said)
    return failure


def _described(exc: BaseException, model_label: str, model: Any) -> Failure:
    from pydantic_ai import exceptions as pe

    from co_core.agent.calls.loops import TurnStopped
    from co_core.kernel import paths
    from co_core.kernel.errors import CoError
    from co_core.sessions.overflow import context_overflow

    if isinstance(exc, TurnStopped):
        return Failure(str(exc), exc.hint)
    if isinstance(exc, CoError):
        return Failure(str(exc))
    if (unwritable := paths.unwritable(exc)) is not None:  # a read-only home, a full disk
        return Failure(str(unwritable))
    if isinstance(exc, pe.UsageLimitExceeded):
        return Failure(
            f"turn stopped: {_first_line(exc).split('. ')[0].rstrip('.')}",
            "the model may be looping; rephrase, or raise the limit: co config set request_limit 40",
        )
    if isinstance(exc, pe.ModelRequestTimeout):
        return Failure(
            f"{model_label} timed out after {exc.timeout:g} s",
            "a slow local model may need longer: co config set request_timeout 900",
        )
    if isinstance(exc, (pe.ModelTimeoutError, asyncio.TimeoutError)):
        return Failure(
            f"{model_label} timed out",
            "the server may be overloaded or the model too large; try again or pick a smaller model",
        )
    if isinstance(exc, pe.ModelHTTPError) and (overflow := context_overflow(exc)):
        window = f" ({overflow.window:,} tokens)" if overflow.window else ""
        return Failure(
            f"the conversation is longer than {model_label}'s context window{window}",
            "/compact summarises older turns, /clear starts afresh",
        )
    if isinstance(exc, pe.ModelHTTPError):
        body = _first_line(exc)
        return Failure(
            f"{model_label} answered HTTP {exc.status_code}: {body}",
            "check the model name and API key (co config show), or pick another with --model",
        )
    if isinstance(exc, pe.ModelConnectionError) or _is_connection_error(exc):
        return _unreachable(exc, model_label, model)
    if isinstance(exc, pe.ModelAPIError):
        return Failure(
            f"{model_label} failed: {_first_line(exc)}", "try again, or pick another model"
        )
    if isinstance(exc, pe.UnexpectedModelBehavior):
        text = _first_line(exc)
        if "max retries" in text:
            return Failure(
                f"a tool kept failing: {text}",
                "the model could not fix its call; rephrase the request or raise retries",
            )
        return Failure(f"the model misbehaved: {text}", "try again or rephrase")
    return Failure(f"{type(exc).__name__}: {_first_line(exc)}", "this is a bug in Co or a plugin")


def _is_connection_error(exc: BaseException) -> bool:
    import httpx

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (httpx.ConnectError, ConnectionError)):
            return True
        if type(current).__name__ == "APIConnectionError":
            return True
        current = current.__cause__ or current.__context__
    return False
