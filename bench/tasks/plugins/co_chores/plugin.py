"""co-chores: a todo list, registered as a plugin written before roles existed (a risk and
a permission key only): Co reads what its arguments are from the signatures."""

from __future__ import annotations

from typing import Any

from co_core import hookimpl


@hookimpl
def register_tools(register: Any) -> None:
    tools = "co_chores.tools"
    register(f"{tools}:add_todo", risk="write", permission="todo:add:{title}")
    register(f"{tools}:list_todos", risk="read", permission="todo:read")
    register(f"{tools}:done_todo", risk="write", permission="todo:done:{number}")
