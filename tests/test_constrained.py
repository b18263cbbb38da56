"""The ``local`` model's path: Co sends one JSON schema (as a grammar with a plain-text
alternative where an answer may come) and the tools as signatures, writes tool calls and
results into the conversation as text, and turns a call in the answer into a real call.
Driven through a real OpenAI-compatible HTTP server (tests/openai_server.py); every
schema Co sends is checked by llama.cpp's own converter and grammar engine
(tests/gbnf_check.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gbnf_check
import pytest
from office_plugin import office_and_mail
from openai_server import Server

from co_core.agent.local.constrained import (
    WORDS_ONLY,
    ConstrainedModel,
    response_schema,
    words_or_call,
)
from co_core.agent.models import compat_model
from co_core.steering.runs import copy_spans, edges
from co_core.testing import Approvals, run_turn

pytestmark = pytest.mark.usefixtures("co_dirs")


@pytest.fixture
def replies() -> Iterator[tuple[Server, list[dict[str, Any]]]]:
    """A server answering with the texts queued in the list, in order."""
    queue: list[dict[str, Any]] = []
    with Server(lambda body: queue.pop(0) if queue else {"text": "(nothing queued)"}) as server:
        yield server, queue


def local(server: Server, *, small: bool = False) -> ConstrainedModel:
    compat = compat_model("local", server.base_url, None, "llama-cpp", stream_tools=False)
    return ConstrainedModel(compat, max_tokens=200, small=small, words=True)


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"text": json.dumps({"name": name, "arguments": args})}


def schema_of(body: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema a request constrains its answer to (llama.cpp's ``json_object``)."""
    assert body["response_format"]["type"] == "json_object", body.get("response_format")
    schema: dict[str, Any] = body["response_format"]["schema"]
    return schema


def accepts(body: dict[str, Any], answer: str) -> bool:
    """Would llama.cpp let a model answer ``answer`` to this request (its grammar, or its
    schema as llama-cpp-python's server turns it into one)?"""
    if "grammar" in body:
        return gbnf_check.accepts(body["grammar"], answer)
    return gbnf_check.accepts_schema(schema_of(body), answer)


def tools_in(body: dict[str, Any]) -> set[str]:
    text = body.get("grammar") or json.dumps(body["response_format"]["schema"])
    return set(re.findall(r"read_file|list_files|list_emails|draft_email|search_notes", text))


def system_text(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")


def test_a_call_in_the_answer_runs_as_a_real_call_and_comes_back_as_text(
    replies: tuple[Server, list[dict[str, Any]]], tmp_path: Path
) -> None:
    server, queue = replies
    (tmp_path / "notes.txt").write_text("Meeting in room B-204.\n")
    queue += [call("read_file", path="notes.txt"), {"text": "It is room B-204."}]
    with office_and_mail(cwd=tmp_path) as app:
        turn = run_turn(app, "Which room? See notes.txt", local(server))
    assert turn.output == "It is room B-204."
    assert [(c["tool"], c["args"], c["status"]) for c in turn.calls] == [
        ("read_file", {"path": "notes.txt"}, "ok")
    ]
    first, second = server.requests
    assert "tools" not in first and "tool_choice" not in first  # no server-side tool format
    assert first["max_tokens"] == 200 and "max_completion_tokens" not in first
    assert "- read_file(path: str): Read a text file of the workspace." in system_text(first)
    assert '{"name": "TOOL", "arguments": {...}}' in system_text(first)
    assert accepts(first, call("read_file", path="notes.txt")["text"])
    assert accepts(first, "It is room B-204.")  # or a plain answer
    assert not accepts(first, call("list_emails")["text"])  # offered tools only
    roles = [m["role"] for m in second["messages"]]
    assert "tool" not in roles
    assert second["messages"][-2] == {
        "role": "assistant",
        "content": '<tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}</tool_call>',
    }
    assert second["messages"][-1]["role"] == "user"
    assert second["messages"][-1]["content"] == "Result of read_file:\nMeeting in room B-204."
    assert second["temperature"] == 0  # Co's own llama.cpp decodes deterministically


def test_plain_text_stays_an_answer(replies: tuple[Server, list[dict[str, Any]]]) -> None:
    server, queue = replies
    queue.append({"text": "Hello! {not a call} <b>"})
    with office_and_mail() as app:
        turn = run_turn(app, "Say hi", local(server))
    assert turn.output == "Hello! {not a call} <b>" and turn.calls == []


def test_a_failed_call_reaches_the_model_as_text(
    replies: tuple[Server, list[dict[str, Any]]], tmp_path: Path
) -> None:
    server, queue = replies
    queue += [call("read_file", path="gone.txt"), {"text": "No such file."}]
    with office_and_mail(cwd=tmp_path) as app:
        run_turn(app, "read gone.txt", local(server))
    last = server.requests[1]["messages"][-1]
    assert last["role"] == "user"
    assert last["content"].startswith("read_file failed: no file 'gone.txt'")


def test_the_schema_is_one_llama_cpp_turns_into_a_grammar_for_every_bundled_tool(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    llama_grammar = pytest.importorskip("llama_cpp.llama_grammar")
    from co_core.agent.assembly.build import load_tools
    from co_core.agent.tools.toolbox import _compact
    from co_core.testing import make_app

    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)
    tools = [_compact(t.tool_def) for t in load_tools(make_app().host, lambda message: None)]
    assert len(tools) >= 29
    for text in (True, False):
        schema = json.dumps(response_schema(tools, text=text))
        # llama-cpp-python's server falls back to any JSON when its converter fails: it
        # must not fail, and the grammar it writes must load
        converted = llama_grammar.json_schema_to_gbnf(schema)
        llama_grammar.LlamaGrammar.from_string(converted, verbose=False)
    grammar = words_or_call(response_schema(tools, text=False))
    llama_grammar.LlamaGrammar.from_string(grammar, verbose=False)
    assert gbnf_check.accepts(grammar, json.dumps({"name": "list_files", "arguments": {}}))
    assert gbnf_check.accepts(grammar, "Hello there.")
    assert not gbnf_check.accepts(grammar, '{"name": "no_such_tool", "arguments": {}}')


def test_a_tools_definitions_are_found_where_the_schema_refers_to_them() -> None:
    from pydantic_ai.tools import ToolDefinition

    nested = {
        "type": "object",
        "properties": {"when": {"$ref": "#/$defs/Span"}},
        "required": ["when"],
        "$defs": {"Span": {"type": "object", "properties": {"days": {"type": "integer"}}}},
    }
    tool = ToolDefinition(name="plan", parameters_json_schema=nested)
    other = ToolDefinition(name="other", parameters_json_schema=nested)
    schema = response_schema([tool, other], text=True)
    assert set(schema["$defs"]) == {"t0-Span", "t1-Span"}  # at the top, one per tool
    answer = json.dumps({"name": "plan", "arguments": {"when": {"days": 3}}})
    assert gbnf_check.accepts_schema(schema, answer)
    assert not gbnf_check.accepts_schema(
        schema, json.dumps({"name": "plan", "arguments": {"when": 3}})
    )


def test_copied_runs_start_and_end_at_word_edges() -> None:
    text = "Read notes.txt, the wifi password"
    starts, ends = edges(text)
    assert [text[i:].split()[0] for i in starts] == ["Read", "notes.txt,", "wifi", "password"]
    assert text.index("notes.txt") + len("notes.tx") not in ends  # "notes.tx" cannot end
    assert text.index("notes.txt") + len("notes.txt") in ends  # "notes.txt" can
    assert text.index(",") + 1 not in ends  # not with the comma
    assert text.index(" the") + 4 not in ends  # nor on "the"
    spans = copy_spans(text) or []
    assert "the wifi password" not in spans and "wifi password" in spans


# -- a small model: Co routes clear requests -------------------------------------------------


def test_a_clear_request_makes_a_small_model_call_the_tool_then_answer_from_its_result(
    replies: tuple[Server, list[dict[str, Any]]], tmp_path: Path
) -> None:
    server, queue = replies
    (tmp_path / "notes.txt").write_text("Meeting in room B-204.\n")
    queue += [call("read_file", path="notes.txt"), {"text": "The meeting is in room B-204."}]
    with office_and_mail(cwd=tmp_path) as app:
        turn = run_turn(app, "Read notes.txt: which room?", local(server, small=True))
    assert turn.output == "The meeting is in room B-204."  # the model's answer, not a dump
    first, second = server.requests
    assert first["temperature"] == 0  # the same words, the same call
    assert tools_in(first) == {"read_file"}
    assert not accepts(first, "The room is B-204.")  # no plain text this time: a call
    # its path can only be copied from the user's words
    assert schema_of(first)["properties"]["arguments"]["properties"]["path"]["enum"] == [
        "notes.txt"
    ]
    # the model reads the result, then the question again
    assert second["messages"][-1]["content"] == (
        "Result of read_file:\nMeeting in room B-204.\n\n"
        "Answer my question from this: Read notes.txt: which room?"
    )
    assert second["grammar"] == WORDS_ONLY  # it answers in words, not with another call


def test_after_a_listing_a_small_model_may_read_what_it_found_then_answers_in_words(
    replies: tuple[Server, list[dict[str, Any]]], tmp_path: Path
) -> None:
    server, queue = replies
    (tmp_path / "room.txt").write_text("Room B-204.\n")
    queue += [call("list_files"), call("read_file", path="room.txt"), {"text": "Room B-204."}]
    with office_and_mail(cwd=tmp_path) as app:
        turn = run_turn(
            app, "List the files here: what is the meeting code?", local(server, small=True)
        )
    assert [c["tool"] for c in turn.calls] == ["list_files", "read_file"]
    assert turn.output == "Room B-204."
    follow_up = server.requests[1]
    assert tools_in(follow_up) == {"read_file"}
    third = server.requests[2]
    assert third["grammar"] == WORDS_ONLY and "### Tools" not in system_text(third)


@pytest.mark.parametrize(
    "answer", ["The meeting is in the big hall on Friday.", "I cannot read files."]
)
def test_a_small_models_answer_that_does_not_say_what_the_result_says_is_replaced(
    replies: tuple[Server, list[dict[str, Any]]], tmp_path: Path, answer: str
) -> None:
    server, queue = replies
    lines = [f"Line {i}: nothing to see" for i in range(200)]
    lines[120] = "Meeting in room B-204."
    (tmp_path / "notes.txt").write_text("\n".join(lines) + "\n")
    queue += [call("read_file", path="notes.txt"), {"text": answer}]
    with office_and_mail(cwd=tmp_path) as app:
        turn = run_turn(
            app, "Read notes.txt: which room is the meeting in?", local(server, small=True)
        )
    assert "Meeting in room B-204." in turn.output  # the line that answers, from the file
    assert answer not in turn.output and len(turn.output) < 700  # not the whole file


def test_a_small_models_empty_answer_is_replaced_by_the_result(
    replies: tuple[Server, list[dict[str, Any]]], tmp_path: Path
) -> None:
    server, queue = replies
    (tmp_path / "notes.txt").write_text("Meeting in room B-204.\n")
    queue += [call("read_file", path="notes.txt"), {"text": "   "}]
    with office_and_mail(cwd=tmp_path) as app:
        turn = run_turn(app, "Read notes.txt: which room?", local(server, small=True))
    assert turn.output.strip() == "Meeting in room B-204."


def test_a_long_result_reaches_a_small_model_as_the_lines_that_answer_the_question(
    replies: tuple[Server, list[dict[str, Any]]], tmp_path: Path
) -> None:
    server, queue = replies
    lines = [f"option_{i} = value {i}" for i in range(400)]
    lines[250] = "port = 45783"
    (tmp_path / "app.conf").write_text("# settings\n" + "\n".join(lines) + "\n")
    queue += [call("read_file", path="app.conf"), {"text": "45783"}]
    with office_and_mail(cwd=tmp_path) as app:
        run_turn(app, "Read app.conf: which port does it set?", local(server, small=True))
    seen = server.requests[1]["messages"][-1]["content"]
    assert "port = 45783" in seen and "# settings" in seen
    assert "option_399" not in seen and "lines left out]" in seen
    assert len(seen) < 1500  # steering.result_chars (1200) and the question


def test_a_small_model_is_answered_for_when_the_tool_is_not_set_up(
    replies: tuple[Server, list[dict[str, Any]]],
) -> None:
    server, _queue = replies
    with office_and_mail() as app:
        turn = run_turn(app, "List my newest emails", local(server, small=True))
    assert turn.output == "Mail is not signed in: run `co mail login`."
    assert server.requests == []  # no model request at all


def test_a_small_model_is_answered_for_when_its_call_is_denied(
    replies: tuple[Server, list[dict[str, Any]]],
) -> None:
    server, queue = replies
    queue.append(call("draft_email", to="bob", body="hi"))
    with office_and_mail({"mail": {"token": "t"}}) as app:
        turn = run_turn(
            app, "Draft an email to bob", local(server, small=True), approvals=Approvals(False)
        )
    assert turn.output == "The user denied this call."
    assert len(server.requests) == 1


def test_without_a_clear_match_a_small_model_answers_freely(
    replies: tuple[Server, list[dict[str, Any]]],
) -> None:
    server, queue = replies
    queue.append({"text": "Hi there!"})
    with office_and_mail() as app:
        turn = run_turn(app, "Say hi", local(server, small=True))
    assert turn.output == "Hi there!"
    body = server.requests[0]
    assert accepts(body, "Hi there!") and accepts(body, call("list_files")["text"])
    assert "You are Co, a helpful assistant" in system_text(body)  # the short prompt
    assert "### Response style" not in system_text(body)
