"""co-todo's tests: Co's testing helpers (co_core.testing) with real settings, real
resources, Co's real agent and policy, a scripted model and the plugin's real tools.

The plugin guide shows parts of this file; Co's suite checks they run as shown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from co_todo import plugin

from co_core import CoError, ToolCall
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

PACKAGE = Path(plugin.__file__).parent


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
        turn = run_turn(app, "add three todos, then list them", script)

    assert json.loads(todo_file.read_text()) == ["buy milk", "call Ada", "water the plants"]
    assert oct(todo_file.stat().st_mode & 0o777) == "0o600"
    assert turn.output.splitlines()[-2:] == ["1. buy milk", "2. call Ada"]  # page 1 of 2
    assert turn.approvals.asked == []  # the plugin's approval_policy allowed add_todo


# /docs


def test_an_empty_list_is_an_answer_and_a_bad_call_gets_a_hint(co_dirs: Path) -> None:
    script = script_calls(("list_todos", {"contains": "milk"}), ("add_todo", {"title": "  "}))
    with use_plugin(plugin, name="todo") as app:
        turn = run_turn(app, "todos?", script)
    assert turn.output.startswith("No todos match.\n")
    assert "give the todo as a short sentence" in turn.output
    assert [call["status"] for call in turn.calls] == ["ok", "retry"]


def test_the_second_page_says_there_is_no_more(co_dirs: Path, tmp_path: Path) -> None:
    todo_file = tmp_path / "todo.json"
    todo_file.write_text(json.dumps(["a", "b", "c"]))
    settings = {"todo": {"file": str(todo_file), "page_size": 2}}
    seen: dict[str, list[str]] = {}

    def answer(results: list[str]) -> str:
        seen["results"] = results
        return "done"

    with use_plugin(plugin, name="todo", settings=settings) as app:
        run_turn(app, "more", script_calls(("list_todos", {"page": 2}), answer=answer))
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
    # declared through a real entry point, as `pip install -e .` does
    site = install_package(tmp_path / "site", "todo", "co_todo.plugin")
    env = {"PYTHONPATH": os.pathsep.join([str(site), str(PACKAGE.parent)])}
    env["CO_LOAD_PLUGINS"] = "todo"
    (co_dirs.parent / "co-data" / "todo.json").write_text('["buy milk"]')
    assert run_co("todo", "list", env=env).stdout == "1. buy milk\n"
    listed = json.loads(run_co("plugins", "--json", env=env).stdout)
    assert [(p["name"], p["status"], p["tools"]) for p in listed if p["status"] != "disabled"] == [
        ("todo", "loaded", ["list_todos", "add_todo"])
    ]


def test_uses_only_the_public_api_and_a_light_hook_module() -> None:
    assert private_imports(PACKAGE) == []
    probe = "import sys, co_todo.plugin; print(sorted(m for m in sys.modules if 'pydantic' in m))"
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


# docs: test_turn
def test_a_turn_of_co_asks_before_what_the_plugin_does_not_allow(co_dirs: Path) -> None:
    script = script_calls(("add_todo", {"title": "call Ada"}))
    settings = {"policy": {"rules": [{"match": "todo:add:*", "effect": "ask"}]}}
    with use_plugin(plugin, name="todo", settings=settings) as app:
        # The user's rule beats the plugin's "allow": Co asks, and the user says no.
        turn = run_turn(app, "remind me to call Ada", script, approvals=Approvals(False))
    assert turn.approvals.tools_asked == ["add_todo"]
    assert [call["status"] for call in turn.calls] == ["denied"]
    assert [entry["event"] for entry in turn.audit()] == ["decision", "answer"]


# /docs


def test_a_rule_holds_however_the_model_spaces_the_title(co_dirs: Path, tmp_path: Path) -> None:
    todo_file = tmp_path / "todo.json"
    rules = [{"match": "todo:add:buy milk", "effect": "deny"}]
    settings = {"todo": {"file": str(todo_file)}, "policy": {"rules": rules}}
    script = script_calls(("add_todo", {"title": "  buy   milk "}))
    with use_plugin(plugin, name="todo", settings=settings) as app:
        turn = run_turn(app, "remind me to buy milk", script)
    assert [(call["permission"], call["status"]) for call in turn.calls] == [
        ("todo:add:buy milk", "denied")
    ]
    assert not todo_file.exists()
