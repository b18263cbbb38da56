"""co-todo's hooks. Co imports this module on every start: only co_core at the top."""

# docs: header
from __future__ import annotations

from typing import TYPE_CHECKING

from co_core import (
    CheckResult,
    CoDeps,
    Effect,
    ResourceRegister,
    SettingsRegister,
    SlashCommandRegister,
    StatusCheckRegister,
    ToolCall,
    ToolRegister,
    hookimpl,
)

if TYPE_CHECKING:  # only for type checkers: these would slow every start of Co down
    import typer

    from co_core import Settings
    from co_todo.store import TodoStore

CO_HOOKSPEC_VERSION = 5  # the hookspec version it was written against
# /docs


# docs: register_settings
@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_todo.settings import TodoSettings

    register("todo", TodoSettings)


# /docs


# docs: register_deps
@hookimpl
def register_deps(register: ResourceRegister) -> None:
    from co_todo.keys import TODOS

    def todo_store(settings: Settings) -> TodoStore:
        from co_todo.settings import TodoSettings
        from co_todo.store import TodoStore

        return TodoStore(settings.section(TodoSettings).file)

    register(TODOS, todo_store)


# /docs


# docs: register_tools
@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(
        "co_todo.tools:list_todos",
        risk="read",
        permission="todo:read:{contains}",
        does="lists",
        roles={"contains": "query"},  # page is an option: not named, left at its default
    )
    register(
        "co_todo.tools:add_todo",
        risk="write",
        permission="todo:add:{title}",
        resolve="co_todo.targets:todo_title",  # the key names the todo as it will be saved
        does="writes",
        roles={"title": "text"},  # the user's words for the todo
    )


# /docs


# docs: approval_policy
@hookimpl
def approval_policy(call: ToolCall, settings: Settings) -> Effect | None:
    # Adding to the user's own list is harmless and undoable: no need to ask.
    # Co's built-in rules and the user's own rules still come first.
    if call.plugin == "todo" and call.tool == "add_todo":
        return "allow"
    return None


# /docs


# docs: system_instructions
@hookimpl
def system_instructions(settings: Settings) -> str:
    return "Todos are short imperative sentences. List todos before adding one twice."


# /docs


# docs: register_status_checks
@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    from co_core import fail, off, ok

    def todo_file(settings: Settings) -> CheckResult:
        from co_todo.settings import TodoSettings
        from co_todo.store import TodoStore

        store = TodoStore(settings.section(TodoSettings).file)
        if not store.path.exists():
            return off(f"no todos yet ({store.path})")
        try:
            return ok(f"{len(store.all())} todos in {store.path}")
        except Exception as exc:
            return fail(str(exc))

    register("todo file", todo_file, timeout=2)


# /docs


# docs: register_commands
@hookimpl
def register_commands(app: typer.Typer) -> None:
    from co_todo.cli import todo_app

    app.add_typer(todo_app, name="todo")


# /docs


# docs: register_slash_commands
@hookimpl
def register_slash_commands(register: SlashCommandRegister) -> None:
    from co_todo.keys import TODOS

    def count(arg: str, deps: CoDeps) -> str:
        todos = deps.resource(TODOS).all()
        return f"{len(todos)} todos" if todos else "no todos"

    register("todos", count, help="how many todos you have")


# /docs
