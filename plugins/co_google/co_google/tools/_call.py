"""One way for every Google tool to run a request and fail in a way the model can act on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from co_core import ModelRetry, ToolContext
from co_google.auth import GoogleAuthProblem
from co_google.keys import GOOGLE
from co_google.services import GoogleApiError, GoogleServices


def services(ctx: ToolContext) -> GoogleServices:
    return ctx.deps.resource(GOOGLE)


def call(
    ctx: ToolContext,
    api: str,
    make: Callable[[Any], Any],
    not_found: str | None = None,
) -> Any:
    """Build the request with ``make(client)`` and execute it; errors become ModelRetry."""
    google = services(ctx)
    try:
        return google.execute(make(google.client(api)), api)
    except GoogleAuthProblem as exc:
        raise ModelRetry(str(exc)) from exc
    except GoogleApiError as exc:
        if exc.kind == "not_found" and not_found:
            raise ModelRetry(not_found) from exc
        raise ModelRetry(str(exc)) from exc


def call_many(ctx: ToolContext, api: str, make: Callable[[Any], list[Any]]) -> list[Any]:
    """Build requests with ``make(client)`` and run them as one batch; errors become ModelRetry."""
    google = services(ctx)
    try:
        return google.execute_many(make(google.client(api)), api)
    except (GoogleAuthProblem, GoogleApiError) as exc:
        raise ModelRetry(str(exc)) from exc


def cap(text: str, limit: int) -> str:
    """Keep the model's context small; say plainly that something was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… truncated: showing the first {limit} of {len(text)} characters]"
