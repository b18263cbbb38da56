"""The bookmark tools: the list is bookmarks.json in the workspace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from co_core import ModelRetry, ToolContext, ToolResult

FILE = "bookmarks.json"


def _load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else []


def save_bookmark(ctx: ToolContext, url: str, label: str) -> str:
    """Save a web link as a bookmark, with a short label."""
    url, label = url.strip(), " ".join(label.split())
    if "://" not in url:
        raise ModelRetry(f"{url!r} is not a link: give the full address, https://...")
    if not label:
        raise ModelRetry("label is empty: give the bookmark a short name")
    path = ctx.deps.workspace / FILE
    ctx.deps.changes.before_write(path)
    marks = _load(path) + [{"url": url, "label": label}]
    path.write_text(json.dumps(marks, indent=1), encoding="utf-8")
    return f"Saved bookmark {len(marks)}: {label} -> {url}"


def _shown(marks: list[dict[str, Any]]) -> ToolResult:
    if not marks:
        return ToolResult.empty("No bookmark matches.")
    lines = [f"{i}. {m['label']}: {m['url']}" for i, m in enumerate(marks, 1)]
    return ToolResult("\n".join(lines), len(marks))


def list_bookmarks(ctx: ToolContext, contains: str = "") -> ToolResult:
    """List the saved bookmarks (label and link)."""
    marks = _load(ctx.deps.workspace / FILE)
    wanted = contains.casefold()
    return _shown([m for m in marks if wanted in f"{m['label']} {m['url']}".casefold()])


def find_bookmark(ctx: ToolContext, words: str) -> ToolResult:
    """Find the bookmarks whose label or link holds any of these words."""
    marks = _load(ctx.deps.workspace / FILE)
    found = [
        m
        for m in marks
        if any(w in f"{m['label']} {m['url']}".casefold() for w in words.casefold().split())
    ]
    if not found:
        return ToolResult.empty(f"No bookmark mentions {words!r}.")
    return _shown(found)
