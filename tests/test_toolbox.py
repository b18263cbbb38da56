"""Which tools each request carries: all when they fit the budget, else the best-ranked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from office_plugin import office_and_mail
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart

from co_core.agent.tools.bm25 import BM25, words
from co_core.agent.tools.toolbox import compact_schema
from co_core.testing import run_turn

pytestmark = pytest.mark.usefixtures("co_dirs")

SMALL = {"tool_budget": 120, "mail": {"token": "t"}}  # room for about two tools


def steps(*responses: Any) -> tuple[Any, list[list[str]]]:
    """A script answering with ``responses`` in order; records the tools of each request."""
    sent: list[list[str]] = []

    def script(messages: list[Any], info: Any) -> ModelResponse:
        sent.append([t.name for t in info.function_tools])
        response = responses[min(len(sent), len(responses)) - 1]
        return response(messages) if callable(response) else response

    return script, sent


def call(tool: str, **args: Any) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(tool, args)])


def text(answer: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(answer)])


def last_return(messages: list[Any]) -> str:
    part = messages[-1].parts[-1]
    assert isinstance(part, ToolReturnPart)
    return str(part.content)


def test_words_and_ranking_are_plain_and_deterministic() -> None:
    assert words("Read my notes.txt, list_files and searchNotes") == [
        "read", "note", "txt", "list", "file", "search", "note",
    ]  # fmt: skip
    index = BM25({"read_file": ["read", "file"], "search_notes": ["search", "note"]})
    assert index.ranked({"note": 1.0}) == [("search_notes", pytest.approx(0.6931, 1e-3))]
    assert [n for n, _ in index.ranked({"read": 1.0, "file": 1.0, "note": 0.2})] == [
        "read_file",
        "search_notes",
    ]


def test_file_names_commands_and_questions_say_what_kind_of_tool_is_wanted() -> None:
    from co_core.agent.tools.bm25 import query_weights

    named = query_weights(("Read notes.txt please", 1.0))
    assert named["file"] == named["read"] == 1.0
    assert "path" not in named  # a parameter's name says nothing of what the tool does
    assert named["note"] == pytest.approx(0.3)  # the words inside a file name count less
    assert query_weights(("Run `wc -l x`", 1.0))["command"] == 1.0
    assert query_weights(("Which room is it in notes.txt?", 1.0))["read"] == 0.5
    assert query_weights(("When is my dentist appointment?", 1.0))["search"] == 0.5


def test_all_ready_tools_are_sent_when_they_fit_the_budget(tmp_path: Path) -> None:
    script, sent = steps(text("hi"))
    with office_and_mail({"mail": {"token": "t"}}, cwd=tmp_path) as app:
        run_turn(app, "Say hi", script)
    assert set(sent[0]) == {
        "read_file",
        "list_files",
        "search_notes",
        "run_command",
        "broken",
        "list_emails",
        "draft_email",
        "remember",
    }  # fmt: skip  (remember: Co's own, co_core.agent.memory)
    assert "find_tools" not in sent[0]  # nothing to find: everything is there


def test_over_the_budget_the_tools_matching_the_users_words_are_sent(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("Meeting in room B-204.\n")
    script, sent = steps(call("read_file", path="notes.txt"), lambda m: text(last_return(m)))
    with office_and_mail(SMALL, cwd=tmp_path) as app:
        turn = run_turn(app, "Read the file notes.txt", script)
    assert turn.output == "Meeting in room B-204.\n"
    assert "read_file" in sent[0] and "find_tools" in sent[0]
    assert not {"list_emails", "draft_email", "run_command"} & set(sent[0])
    assert "read_file" in sent[1]  # used in this conversation: it stays


def test_a_greeting_gets_no_tools_but_find_tools_and_one_request(tmp_path: Path) -> None:
    script, sent = steps(text("Hello!"))
    with office_and_mail(SMALL, cwd=tmp_path) as app:
        turn = run_turn(app, "Say hi", script)
    assert sent == [["find_tools"]]
    assert turn.output == "Hello!" and turn.calls == []


def test_find_tools_offers_the_tools_it_finds_from_the_next_request(tmp_path: Path) -> None:
    script, sent = steps(
        call("find_tools", query="search notes"),
        lambda m: call("search_notes", query="wifi"),
        lambda m: text(last_return(m)),
    )
    with office_and_mail(SMALL, cwd=tmp_path) as app:
        turn = run_turn(app, "I need the wifi password", script)
    assert "search_notes" not in sent[0]
    assert "search_notes" in sent[1]
    assert [(c["tool"], c["status"]) for c in turn.calls] == [
        ("find_tools", "ok"),
        ("search_notes", "ok"),
    ]
    assert turn.output == "Wifi: Password: Kalomi-417"


def test_find_tools_names_tools_that_need_setting_up(tmp_path: Path) -> None:
    found: list[str] = []

    def answer(messages: list[Any]) -> ModelResponse:
        found.append(last_return(messages))
        return text("done")

    script, _sent = steps(call("find_tools", query="emails"), answer)
    with office_and_mail({"tool_budget": 120}, cwd=tmp_path) as app:
        run_turn(app, "anything new?", script)
    assert "list_emails: not set up: Mail is not signed in: run `co mail login`" in found[0]
    assert "Offered from your next step" not in found[0]


def test_tools_used_earlier_in_the_conversation_stay_offered(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    first, _ = steps(call("read_file", path="a.txt"), text("read it"))
    with office_and_mail(SMALL, cwd=tmp_path) as app:
        earlier = run_turn(app, "Read the file a.txt", first)
        script, sent = steps(text("sure"))
        run_turn(app, "and now something else entirely", script, history=earlier.messages)
    assert "read_file" in sent[0]


def test_a_ready_tool_called_without_being_sent_is_offered_next(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "b.txt").write_text("beta\n")
    script, sent = steps(
        call("list_files", path="."),
        call("list_files", path="."),
        lambda m: text(last_return(m)),
    )
    with office_and_mail(SMALL, cwd=tmp_path / "work") as app:
        turn = run_turn(app, "Say hi", script)
    assert "list_files" not in sent[0] and "list_files" in sent[1]
    assert turn.output == "b.txt"
    assert [c["status"] for c in turn.calls] == ["retry", "ok"]


def test_slash_context_shows_the_budget_and_what_was_sent(tmp_path: Path) -> None:
    import asyncio

    from co_core.agent.conversation import Conversation
    from co_core.agent.models import ResolvedModel
    from co_core.testing import scripted_model
    from co_core.ui.repl import Repl

    script, _ = steps(text("hi"))
    with office_and_mail(SMALL, cwd=tmp_path) as app:
        repl = Repl(app)
        conversation: Conversation = repl.conversation
        conversation.model = ResolvedModel(scripted_model(script), "scripted")
        conversation.prepare()
        try:
            asyncio.run(conversation.run_turn("Read the file notes.txt"))
            shown = asyncio.run(repl._context(""))
        finally:
            conversation.close()
    assert "tools: 1 of 8 sent and find_tools, " in shown
    assert "of 120 tokens of budget (ranked against your words; tool_budget setting)" in shown
    assert "sent: read_file, find_tools" in shown


def test_slash_context_names_the_plugins_not_offered(tmp_path: Path) -> None:
    import asyncio

    from co_core.agent.conversation import Conversation
    from co_core.agent.models import ResolvedModel
    from co_core.testing import scripted_model
    from co_core.ui.repl import Repl

    script, _ = steps(text("hi"))
    with office_and_mail(cwd=tmp_path) as app:
        repl = Repl(app)
        conversation: Conversation = repl.conversation
        conversation.model = ResolvedModel(scripted_model(script), "scripted")
        conversation.prepare()
        try:
            asyncio.run(conversation.run_turn("hi"))
            shown = asyncio.run(repl._context(""))
        finally:
            conversation.close()
    assert "tools: 6 of 6 sent, " in shown and "(all fit; tool_budget setting)" in shown
    assert "  not offered: mail: Mail is not signed in: run `co mail login`" in shown


def test_schemas_sent_are_compact_but_mean_the_same() -> None:
    schema = {
        "type": "object",
        "title": "args",
        "properties": {
            "end": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "path": {"type": "string", "title": "Path"},
        },
        "required": ["path"],
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {"end": {"type": "integer"}, "path": {"type": "string"}},
        "required": ["path"],
    }


def test_compacting_keeps_an_argument_named_title() -> None:
    """A todo plugin's ``add_todo(title)``: the schema keyword ``title`` goes, the argument
    stays (it once went too, and every call came without a title)."""
    schema = {
        "title": "add_todo",
        "type": "object",
        "properties": {"title": {"title": "Title", "type": "string"}},
        "required": ["title"],
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
    }


def test_a_later_turn_builds_no_tool_schema_again(tmp_path: Path, monkeypatch: Any) -> None:
    """Tracing gives every run fresh capabilities, and pydantic-ai then asks each one for its
    tools again: find_tools' schema is built once a conversation, not again every turn."""
    import asyncio

    from pydantic.json_schema import GenerateJsonSchema

    from co_core.agent.conversation import Conversation
    from co_core.agent.models import ResolvedModel
    from co_core.telemetry import spans
    from co_core.testing import scripted_model

    built: list[str] = []
    generate = GenerateJsonSchema.generate

    def counted(self: GenerateJsonSchema, *args: Any, **kwargs: Any) -> Any:
        built.append(type(self).__name__)
        return generate(self, *args, **kwargs)

    script, _sent = steps(call("find_tools", query="search notes"), text("Found it."))
    with office_and_mail(SMALL, cwd=tmp_path) as app:
        chat = Conversation(app)
        try:
            chat.model = ResolvedModel(scripted_model(script), "scripted")
            chat.prepare()
            assert spans.tracing()  # the case that asked for the tools again
            asyncio.run(chat.run_turn("hello"))
            monkeypatch.setattr(GenerateJsonSchema, "generate", counted)
            chat.history = []
            turn = asyncio.run(chat.run_turn("hello again"))
        finally:
            chat.close()
    assert turn.output == "Found it."
    assert built == []
