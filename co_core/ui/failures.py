"""Turn what can go wrong during a turn into one readable line plus a hint."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass


@dataclass(frozen=True)
class Failure:
    message: str
    hint: str = ""

    def __str__(self) -> str:
        return f"{self.message} (hint: {self.hint})" if self.hint else self.message


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def describe(exc: BaseException, model_label: str = "the model") -> Failure:
    """One line for the user; never a traceback."""
    from pydantic_ai import exceptions as pe

    from co_core.agent.loops import TurnStopped
    from co_core.kernel.errors import CoError

    if isinstance(exc, TurnStopped):
        return Failure(str(exc), exc.hint)
    if isinstance(exc, CoError):
        return Failure(str(exc))
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
    if isinstance(exc, pe.ModelHTTPError):
        body = _first_line(exc)
        return Failure(
            f"{model_label} answered HTTP {exc.status_code}: {body}",
            "check the model name and API key (co config show), or pick another with --model",
        )
    if isinstance(exc, pe.ModelConnectionError) or _is_connection_error(exc):
        return Failure(
            f"cannot reach {model_label}: {_first_line(exc)}",
            "is the model server running (e.g. `ollama serve`)? or choose one with --model",
        )
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
