"""The todo tools: the list is todos.json in the workspace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from co_core import ModelRetry, ToolContext, ToolResult

FILE = "todos.json"


def _load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else []


def add_todo(ctx: ToolContext, title: str) -> str:
    """Add one todo to the user's list."""
    title = " ".join(title.split())
    if not title:
        raise ModelRetry("title is empty: give the todo as a short sentence")
    path = ctx.deps.workspace / FILE
    ctx.deps.changes.before_write(path)
    todos = _load(path) + [{"title": title, "done": False}]
    path.write_text(json.dumps(todos, indent=1), encoding="utf-8")
    return f"Added todo {len(todos)}: {title}"


def list_todos(ctx: ToolContext, contains: str = "", include_done: bool = False) -> ToolResult:
    """List the user's todos, optionally only those containing ``contains``."""
    todos = _load(ctx.deps.workspace / FILE)
    shown = [
        f"{i}. {'[x]' if t['done'] else '[ ]'} {t['title']}"
        for i, t in enumerate(todos, 1)
        if (include_done or not t["done"]) and contains.casefold() in t["title"].casefold()
    ]
    if not shown:
        return ToolResult.empty("No todos match." if contains else "The todo list is empty.")
    return ToolResult("\n".join(shown), len(shown))


def done_todo(ctx: ToolContext, number: int) -> str:
    """Mark a todo as done, by its number in the list."""
    path = ctx.deps.workspace / FILE
    todos = _load(path)
    if not 1 <= number <= len(todos):
        raise ModelRetry(f"there is no todo {number}: list_todos shows them")
    ctx.deps.changes.before_write(path)
    todos[number - 1]["done"] = True
    path.write_text(json.dumps(todos, indent=1), encoding="utf-8")
    return f"Done: todo {number}, {todos[number - 1]['title']}"
