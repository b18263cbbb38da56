"""co-todo's resource key: typed, so ``ctx.deps.resource(TODOS)`` is a TodoStore."""

from __future__ import annotations

from typing import TYPE_CHECKING

from co_core import ResourceKey

if TYPE_CHECKING:
    from co_todo.store import TodoStore

TODOS: ResourceKey[TodoStore] = ResourceKey("todo.store")  # names start with the plugin's
