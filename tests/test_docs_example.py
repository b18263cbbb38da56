"""The tutorial plugin of docs/plugins.md (tests/docs_example/co_todo), tested like a real one.

docs/plugins.md shows parts of this file; tests/test_doc_snippets.py keeps them identical.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from pydantic_ai import Agent, Tool
from pydantic_ai.models.function import FunctionModel

from co_core import CoError, ToolCall
from co_core.kernel.deps import CoDeps
from co_core.testing import (
    Approvals,
    install_package,
    private_imports,
    run_co,
    run_slash,
    run_turn,
    script_calls,
    status_rows,
    use_plugin,
)

EXAMPLE = Path(__file__).parent / "docs_example"
sys.path.insert(0, str(EXAMPLE))

from co_todo import plugin  # noqa: E402
from co_todo.tools import add_todo, list_todos  # noqa: E402


# docs: test_tools
def test_todos_are_added_and_listed_a_page_at_a_time(co_dirs: Path, tmp_path: Path) -> None:
    todo_file = tmp_path / "todo.json"
    settings = {"todo": {"file": str(todo_file), "page_size": 2}}
    script = script_calls(
        ("add_todo", {"title": "buy  milk"}),
        ("add_todo", {"title": "call Ada"}),
        ("add_todo", {"title": "water the plants"}),
        ("list_todos", {}),
    )
    with use_plugin(plugin, name="todo", settings=settings) as app:
        agent = Agent(FunctionModel(script), deps_type=CoDeps, tools=[add_todo, list_todos])
        result = agent.run_sync("add three todos, then list them", deps=app.make_deps())

    assert json.loads(todo_file.read_text()) == ["buy milk", "call Ada", "water the plants"]
    assert oct(todo_file.stat().st_mode & 0o777) == "0o600"
    assert result.output.splitlines()[-2:] == ["1. buy milk", "2. call Ada"]  # page 1 of 2


# /docs


def test_an_empty_list_is_an_answer_and_a_bad_call_gets_a_hint(co_dirs: Path) -> None:
    script = script_calls(("list_todos", {"contains": "milk"}), ("add_todo", {"title": "  "}))
    with use_plugin(plugin, name="todo") as app:
        agent = Agent(FunctionModel(script), deps_type=CoDeps, tools=[Tool(list_todos), add_todo])
        output = agent.run_sync("todos?", deps=app.make_deps()).output
    assert output.startswith("No todos match.\n")
    assert "give the todo as a short sentence" in output


def test_the_second_page_says_there_is_no_more(co_dirs: Path, tmp_path: Path) -> None:
    todo_file = tmp_path / "todo.json"
    todo_file.write_text(json.dumps(["a", "b", "c"]))
    settings = {"todo": {"file": str(todo_file), "page_size": 2}}
    with use_plugin(plugin, name="todo", settings=settings) as app:
        seen = {}

        def answer(results: list[str]) -> str:
            seen["results"] = results
            return "done"

        script = script_calls(("list_todos", {"page": 2}), answer=answer)
        agent = Agent(FunctionModel(script), deps_type=CoDeps, tools=[list_todos])
        agent.run_sync("more", deps=app.make_deps())
    assert seen["results"] == ["3. c"]


def test_settings_are_validated(co_dirs: Path) -> None:
    with use_plugin(plugin, name="todo", settings={"todo": {"page_size": 0}}) as app:
        with pytest.raises(CoError, match="todo.page_size"):
            _ = app.settings


# docs: test_policy
def test_adding_needs_no_approval_but_other_calls_are_left_to_co(co_dirs: Path) -> None:
    with use_plugin(plugin, name="todo") as app:
        add = ToolCall("add_todo", "todo", {"title": "x"}, "todo:add:x", "write")
        other = ToolCall("delete_file", "files", {"path": "x"}, "fs:delete:x", "write")
        assert plugin.approval_policy(call=add, settings=app.settings) == "allow"
        assert plugin.approval_policy(call=other, settings=app.settings) is None


# /docs


def test_status_check_and_slash_command(co_dirs: Path, tmp_path: Path) -> None:
    todo_file = tmp_path / "todo.json"
    with use_plugin(plugin, name="todo", settings={"todo": {"file": str(todo_file)}}) as app:
        row = status_rows(app)["todo file"]
        assert (row.state, row.plugin) == ("off", "todo")
        assert run_slash(app, "/todos") == "no todos"
        todo_file.write_text('["one", "two"]')
        assert status_rows(app)["todo file"].detail == f"2 todos in {todo_file}"
        assert run_slash(app, "/todos") == "2 todos"
        todo_file.write_text("not json")
        assert status_rows(app)["todo file"].state == "fail"


def test_system_instructions(co_dirs: Path) -> None:
    with use_plugin(plugin, name="todo") as app:
        assert "short imperative sentences" in plugin.system_instructions(settings=app.settings)


def test_installed_it_has_a_command_and_is_listed(co_dirs: Path, tmp_path: Path) -> None:
    site = install_package(tmp_path / "site", "todo", "co_todo.plugin")
    env = {
        "PYTHONPATH": os.pathsep.join([str(site), str(EXAMPLE)]),
        "CO_LOAD_PLUGINS": "todo",
    }
    (co_dirs.parent / "co-data" / "todo.json").write_text('["buy milk"]')
    assert run_co("todo", "list", env=env).stdout == "1. buy milk\n"
    listed = json.loads(run_co("plugins", "--json", env=env).stdout)
    assert [(p["name"], p["status"], p["tools"]) for p in listed if p["status"] != "disabled"] == [
        ("todo", "loaded", ["list_todos", "add_todo"])
    ]


def test_uses_only_the_public_api_and_a_light_hook_module() -> None:
    assert private_imports(EXAMPLE / "co_todo") == []
    probe = "import sys, co_todo.plugin; print(sorted(m for m in sys.modules if 'pydantic' in m))"
    result = run_co_python(probe)
    assert result == "[]"


def run_co_python(code: str) -> str:
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(EXAMPLE)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


# docs: test_turn
def test_a_turn_of_co_adds_a_todo(co_dirs: Path, tmp_path: Path) -> None:
    todo_file = tmp_path / "todo.json"
    settings = {"todo": {"file": str(todo_file)}}
    script = script_calls(("add_todo", {"title": "call Ada"}))
    with use_plugin(plugin, name="todo", settings=settings) as app:
        # Approvals(True): say yes if Co asks (co ask, with no one to ask, says no)
        turn = run_turn(app, "remind me to call Ada", script, approvals=Approvals(True))
    assert turn.output == "Added todo 1: call Ada"
    assert [call["status"] for call in turn.calls] == ["ok"]
    assert json.loads(todo_file.read_text()) == ["call Ada"]


# /docs
