"""A turn going round in circles ends early, with one readable line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from office_plugin import office_and_mail
from pydantic_ai import RunContext
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from co_core import CoDeps
from co_core.agent.calls.loops import FailedCalls, NoAnswer, RepeatedCall
from co_core.testing import Approvals, run_turn
from co_core.ui.failures import describe

pytestmark = pytest.mark.usefixtures("co_dirs")


def looping(*responses: ModelResponse) -> tuple[Any, list[int]]:
    """A model that gives ``responses`` in order and then repeats the last one forever."""
    requests: list[int] = []

    def script(messages: list[Any], info: Any) -> ModelResponse:
        requests.append(len(requests) + 1)
        response = responses[min(len(requests), len(responses)) - 1]
        return ModelResponse(parts=[fresh(part) for part in response.parts])

    return script, requests


def fresh(part: Any) -> Any:
    """The same call with a new id, as a real model gives each call."""
    return ToolCallPart(part.tool_name, part.args) if isinstance(part, ToolCallPart) else part


def call(tool: str, **args: Any) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(tool, args)])


def test_the_same_failing_call_again_ends_the_turn(tmp_path: Path) -> None:
    script, requests = looping(call("read_file", path="missing.txt"))
    with office_and_mail(cwd=tmp_path) as app, pytest.raises(RepeatedCall) as stopped:
        run_turn(app, "read missing.txt", script)
    assert len(requests) == 2  # well before the request limit (25)
    failure = describe(stopped.value)
    assert str(failure).startswith(
        'turn stopped: the model repeated a call that failed: read_file(path="missing.txt"): '
        "no file 'missing.txt': list_files shows what exists (hint: "
    )
    assert "\n" not in str(failure)


def test_calls_after_a_run_of_failures_end_the_turn(tmp_path: Path) -> None:
    script, requests = looping(
        call("broken", what="a"),
        call("broken", what="b"),
        call("read_file", path="nope.txt"),
        call("broken", what="c"),
    )
    with office_and_mail(cwd=tmp_path) as app, pytest.raises(FailedCalls) as stopped:
        run_turn(app, "do things", script)
    assert len(requests) == 4  # the fourth call is not run
    assert str(stopped.value) == (
        "turn stopped: 3 tool calls in a row failed and the model kept going; the last was "
        "read_file(path=\"nope.txt\"): no file 'nope.txt': list_files shows what exists"
    )


def test_a_success_in_between_resets_the_run(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    script, requests = looping(
        call("broken", what="a"),
        call("broken", what="b"),
        call("list_files", path="."),
        call("broken", what="c"),
        ModelResponse(parts=[TextPart("gave up")]),
    )
    with office_and_mail(cwd=tmp_path / "work") as app:
        turn = run_turn(app, "do things", script)
    assert turn.output == "gave up"
    assert [c["status"] for c in turn.calls] == ["retry", "retry", "ok", "retry"]


def test_a_call_of_a_tool_that_is_not_set_up_is_answered_with_how_to_set_it_up(
    tmp_path: Path,
) -> None:
    script, requests = looping(call("list_emails"))
    with office_and_mail(cwd=tmp_path) as app:
        turn = run_turn(app, "check my email", script)
    assert turn.output == "Mail is not signed in: run `co mail login`."
    assert len(requests) == 1  # nothing ran: the call ended as its own record says
    assert [(c["tool"], c["status"], c["from_text"]) for c in turn.calls] == [
        ("list_emails", "not set up", False)
    ]


def test_the_same_holds_for_a_call_written_as_text(tmp_path: Path) -> None:
    written = ModelResponse(parts=[TextPart('{"name": "list_emails", "arguments": {}}')])
    script, requests = looping(written)
    with office_and_mail(cwd=tmp_path) as app:
        turn = run_turn(app, "check my email", script)
    assert turn.output == "Mail is not signed in: run `co mail login`."
    assert len(requests) == 1
    assert [(c["tool"], c["status"], c["from_text"]) for c in turn.calls] == [
        ("list_emails", "not set up", True)
    ]


def test_repeating_a_denied_call_ends_the_turn(tmp_path: Path) -> None:
    script, requests = looping(call("draft_email", to="bob@example.org", body="hi"))
    with (
        office_and_mail({"mail": {"token": "t"}}, cwd=tmp_path) as app,
        pytest.raises(RepeatedCall, match='draft_email\\(to="bob@example.org", body="hi"\\)'),
    ):
        run_turn(app, "mail bob", script, approvals=Approvals(False, reason="not now"))
    assert len(requests) == 2


def test_two_empty_answers_end_the_turn(tmp_path: Path) -> None:
    script, requests = looping(ModelResponse(parts=[TextPart("")]))
    with office_and_mail(cwd=tmp_path) as app, pytest.raises(NoAnswer) as stopped:
        run_turn(app, "Say hi", script)
    assert len(requests) == 2
    assert str(describe(stopped.value)) == (
        "turn stopped: the model gave an empty answer twice "
        "(hint: try again, or a larger model (--model))"
    )


def test_the_same_call_a_third_time_in_a_row_ends_the_turn(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    script, requests = looping(call("list_files", path="."))
    with office_and_mail(cwd=tmp_path / "work") as app, pytest.raises(RepeatedCall) as stopped:
        run_turn(app, "what is here?", script)
    assert len(requests) == 3
    assert str(stopped.value) == (
        'turn stopped: the model made the same call 3 times in a row: list_files(path=".")'
    )


# -- the guard compares calls as the pipeline does: resolved ---------------------------------


def list_things(ctx: RunContext[CoDeps], path: str = ".", hidden: bool = False) -> str:
    """List the things in a folder."""
    return f"things in {path}"


def _things(args: Any, deps: Any) -> Any:
    """The resolver fills in the defaults: ``list_things()`` is ``list_things(path=".")``."""
    from co_core import Resolved

    path = str(args.get("path") or ".").rstrip("/") or "."
    return Resolved({"path": path, "hidden": bool(args.get("hidden", False))})


class Things:
    from co_core import hookimpl

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(list_things, risk="read", permission="things:read:{path}", resolve=_things)


@pytest.mark.parametrize(
    "spellings",
    [
        [{}],  # the same words each time
        [{}, {"path": "."}, {"path": "./", "hidden": False}],  # one call, three spellings
    ],
    ids=["same-words", "respelled"],
)
def test_a_plugin_tools_third_identical_call_ends_the_turn_when_its_resolver_fills_defaults(
    tmp_path: Path, spellings: list[dict[str, Any]]
) -> None:
    from co_core.testing import use_plugin

    ran: list[str] = []

    def script(messages: list[Any], info: Any) -> ModelResponse:
        ran.append("request")
        args = spellings[(len(ran) - 1) % len(spellings)]
        return ModelResponse(parts=[ToolCallPart("list_things", dict(args))])

    with use_plugin(Things(), name="things", cwd=tmp_path) as app:
        with pytest.raises(RepeatedCall) as stopped:
            run_turn(app, "what is here?", script)
    assert len(ran) == 3  # stopped at the third request, not at the request limit
    assert str(stopped.value) == (
        "turn stopped: the model made the same call 3 times in a row: "
        'list_things(path=".", hidden=false)'
    )


def test_co_shells_list_files_called_again_and_again_ends_the_turn(tmp_path: Path) -> None:
    """The case seen with SmolLM2: ``list_files()`` over and over (co-shell's resolver)."""
    from co_core.testing import make_app

    (tmp_path / "work").mkdir()
    requests: list[int] = []

    def script(messages: list[Any], info: Any) -> ModelResponse:
        requests.append(1)
        return ModelResponse(parts=[ToolCallPart("list_files", {})])

    app = make_app({"shell": {"sandbox": "none"}}, cwd=tmp_path / "work")
    with pytest.raises(RepeatedCall, match="same call 3 times in a row: list_files"):
        run_turn(app, "what is here?", script)
    assert len(requests) == 3


def test_an_mcp_tools_third_identical_call_ends_the_turn(co_dirs: Path, tmp_path: Path) -> None:
    from mcp_support import app_with, sdk_server

    app = app_with(
        {"t": sdk_server()}, cwd=tmp_path, rules=[{"match": "mcp:**", "effect": "allow"}]
    )
    script, requests = looping(call("t_echo", text="again"))
    with pytest.raises(RepeatedCall) as stopped:
        run_turn(app, "echo", script)
    assert len(requests) == 3
    assert str(stopped.value).endswith('same call 3 times in a row: t_echo(text="again")')


CO = str(Path(sys.executable).parent / "co")


def co_ask_json(
    cwd: Path, prompt: str, model: str = "chat", **env: str
) -> tuple[dict[str, Any], int]:
    done = subprocess.run(
        [CO, "ask", "--json", "-m", f"function:co_scripts:{model}", prompt],
        capture_output=True, text=True, timeout=120, cwd=cwd, stdin=subprocess.DEVNULL,
        env={**os.environ, **env},
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1]), done.returncode


@pytest.mark.usefixtures("testplug")
def test_co_ask_json_shows_the_call_the_loop_guard_stopped(tmp_path: Path) -> None:
    answer, code = co_ask_json(tmp_path, "anything", model="stuck")
    assert answer["error"].startswith(
        'turn stopped: the model repeated a call that failed: always_wrong(value="x")'
    )
    assert code != 0
    assert [(c["tool"], c["status"]) for c in answer["tool_calls"]] == [
        ("always_wrong", "retry"),
        ("always_wrong", "stopped"),  # the repeat never ran: the guard stopped it
    ]


@pytest.mark.usefixtures("testplug")
def test_co_ask_json_shows_calls_of_tools_not_set_up_and_calls_written_as_text(
    tmp_path: Path,
) -> None:
    answer, code = co_ask_json(tmp_path, "resource", CO_TEST_UNREADY="1")
    assert answer["output"] == "The marker service is not set up: run `co marker login`."
    assert [(c["tool"], c["status"]) for c in answer["tool_calls"]] == [
        ("use_resource", "not set up")
    ]
    assert code == 0
    answer, code = co_ask_json(tmp_path, "json red")  # the lookup written as JSON text
    assert [(c["tool"], c["status"], c["from_text"]) for c in answer["tool_calls"]] == [
        ("lookup", "ok", True)
    ]
