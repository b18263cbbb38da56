"""The tools: imported only when Co builds its agent, so heavy imports would be fine here."""

from __future__ import annotations

from co_core import ModelRetry, ToolContext, ToolResult
from co_todo.keys import TODOS
from co_todo.settings import TodoSettings


# docs: list_todos
def list_todos(ctx: ToolContext, contains: str = "", page: int = 1) -> ToolResult:
    """List the user's todos, optionally only those containing ``contains``."""
    if page < 1:
        raise ModelRetry("page starts at 1")
    store = ctx.deps.resource(TODOS)  # a TodoStore, for the type checker too
    size = ctx.deps.section(TodoSettings).page_size
    found = [t for t in store.all() if contains.casefold() in t.casefold()]
    if not found:
        return ToolResult.empty("No todos match." if contains else "The todo list is empty.")
    start = (page - 1) * size
    shown = found[start : start + size]
    lines = [f"{start + i}. {title}" for i, title in enumerate(shown, 1)]
    more = start + size < len(found)
    return ToolResult("\n".join(lines), len(found), more, page + 1 if more else None)


# /docs


# docs: add_todo
def add_todo(ctx: ToolContext, title: str) -> str:
    """Add one todo to the end of the user's list."""
    title = " ".join(title.split())
    if not title:
        raise ModelRetry("title is empty: give the todo as a short sentence")
    store = ctx.deps.resource(TODOS)
    ctx.deps.changes.before_write(store.path)  # so /undo can take it back
    count = store.add(title)
    return f"Added todo {count}: {title}"


# /docs
