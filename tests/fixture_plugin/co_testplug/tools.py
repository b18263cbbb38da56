"""Test tools: a search with display/count/has_more, a retrying one, a writer, a slow one."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic_ai import ModelRetry, RunContext

from co_core import CoDeps, ToolResult

COLOURS = {"red": "https://example.org/red", "blue": "https://example.org/blue"}


def lookup(ctx: RunContext[CoDeps], query: str) -> ToolResult:
    """Look a colour up; returns a display text with links."""
    if not query.strip():
        raise ModelRetry("query must not be empty; pass a colour name such as 'red'")
    hits = {k: v for k, v in COLOURS.items() if query.lower() in k}
    if not hits:
        return ToolResult.empty(f"No colour matches {query!r}.")
    display = "\n".join(f"- {k}: {v}" for k, v in hits.items())
    return ToolResult(display=display, count=len(hits), has_more=False)


def add_numbers(ctx: RunContext[CoDeps], a: int, b: int) -> int:
    """Add two whole numbers and return the sum."""
    return a + b


def always_wrong(ctx: RunContext[CoDeps], value: str) -> str:
    """A tool that rejects every call (to test the retry budget)."""
    raise ModelRetry(f"value {value!r} is wrong; try another")


def write_note(ctx: RunContext[CoDeps], name: str, text: str) -> str:
    """Write a note file into the workspace."""
    path = ctx.deps.workspace / name
    assert ctx.deps.changes is not None
    ctx.deps.changes.before_write(path)
    path.write_text(text, encoding="utf-8")
    return f"wrote {len(text)} characters to {name}"


async def slow(ctx: RunContext[CoDeps], seconds: float) -> str:
    """Wait a while (to test cancelling a running turn)."""
    await asyncio.sleep(seconds)
    return f"waited {seconds}s"


class Marker:
    """A resource that leaves a file behind when Co closes it (to test cleanup on exit)."""

    def __init__(self, settings: object) -> None:
        self.path = Path(os.environ.get("CO_TEST_CLOSED", "/nonexistent/closed"))

    def close(self) -> None:
        self.path.write_text("closed", encoding="utf-8")


def use_resource(ctx: RunContext[CoDeps]) -> str:
    """Build the marker resource (it is closed when Co exits)."""
    ctx.deps.resource("marker")
    return "resource ready"
