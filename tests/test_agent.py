"""The real agent with real tools, driven by scripted models (pydantic-ai FunctionModel)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import Asking, session_with, turn
from pydantic_ai.exceptions import ModelRequestTimeout, UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from co_core.testing import last_user_text
from co_core.ui.failures import describe

pytestmark = pytest.mark.usefixtures("testplug")


def last_part(messages: list) -> Any:
    return messages[-1].parts[-1]


def test_tools_of_plugins_become_agent_tools_with_plugin_instructions() -> None:
    seen: dict[str, Any] = {}

    def script(messages: list, info: Any) -> ModelResponse:
        seen["tools"] = {t.name: t for t in info.function_tools}
        seen["instructions"] = messages[-1].instructions
        return ModelResponse(parts=[TextPart("ok")])

    session = session_with(script)
    assert turn(session, "hi").output == "ok"
    assert {"lookup", "add_numbers", "always_wrong", "write_note", "slow"} <= set(seen["tools"])
    assert "look a colour up" in seen["tools"]["lookup"].description.lower()
    assert "show the `display` value verbatim" in seen["instructions"]
    assert "has_more" in seen["instructions"]
    assert "lookup tool knows about colours" in seen["instructions"]
    tools = session.ready().agent._function_toolset.tools
    assert tools["write_note"].sequential and not tools["lookup"].sequential


def test_display_is_passed_to_the_model_with_urls_and_count() -> None:
    def script(messages: list, info: Any) -> ModelResponse:
        last = last_part(messages)
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(last.model_response_str())])
        return ModelResponse(parts=[ToolCallPart("lookup", {"query": "re"})])

    result = turn(session_with(script), "find red")
    assert "https://example.org/red" in result.output
    assert '"count":1' in result.output.replace(" ", "")
    assert [(c.tool, c.status) for c in result.calls] == [("lookup", "ok")]


def test_empty_result_is_not_an_error() -> None:
    def script(messages: list, info: Any) -> ModelResponse:
        last = last_part(messages)
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(last.model_response_str())])
        return ModelResponse(parts=[ToolCallPart("lookup", {"query": "green"})])

    result = turn(session_with(script), "find green")
    assert "No colour matches 'green'" in result.output
    assert result.calls[0].status == "ok"


def test_model_retry_tells_the_model_how_to_fix_its_call() -> None:
    hints: list[str] = []

    def script(messages: list, info: Any) -> ModelResponse:
        last = last_part(messages)
        if isinstance(last, (RetryPromptPart, ToolReturnPart)) and (
            isinstance(last, RetryPromptPart) or last.outcome == "retried"
        ):
            hints.append(last.model_response_str())
            return ModelResponse(parts=[ToolCallPart("lookup", {"query": "blue"})])
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(last.content.display)])
        return ModelResponse(parts=[ToolCallPart("lookup", {"query": ""})])

    result = turn(session_with(script), "find")
    assert "must not be empty" in hints[0]
    assert result.output == "- blue: https://example.org/blue"
    assert [c.status for c in result.calls] == ["retry", "ok"]


def test_agent_retries_come_from_settings_and_exhaustion_is_one_line() -> None:
    calls: list[int] = []

    def script(messages: list, info: Any) -> ModelResponse:
        calls.append(1)  # a different blank query each time (the very same one is a loop)
        return ModelResponse(parts=[ToolCallPart("lookup", {"query": " " * len(calls)})])

    session = session_with(script, {"retries": 1})
    with pytest.raises(UnexpectedModelBehavior) as caught:
        turn(session, "x")
    assert len(calls) == 2  # first try + 1 retry
    failure = describe(caught.value, "scripted")
    assert failure.message.startswith("a tool kept failing")
    assert "\n" not in str(failure)


def test_per_tool_retries_override_the_agent_budget() -> None:
    calls: list[int] = []

    def script(messages: list, info: Any) -> ModelResponse:
        calls.append(1)
        return ModelResponse(parts=[ToolCallPart("always_wrong", {"value": "x" * len(calls)})])

    with pytest.raises(UnexpectedModelBehavior):
        turn(session_with(script, {"retries": 5}), "x")
    assert len(calls) == 3  # always_wrong declares retries=2


def test_usage_limit_stops_a_looping_model() -> None:
    count = iter(range(100))

    def script(messages: list, info: Any) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("add_numbers", {"a": next(count), "b": 2})])

    session = session_with(script, {"request_limit": 3})
    with pytest.raises(UsageLimitExceeded) as caught:
        turn(session, "loop")
    failure = describe(caught.value)
    assert failure.message.startswith("turn stopped")
    assert "request_limit" in failure.hint


def test_a_model_slower_than_request_timeout_ends_the_turn_and_the_session_goes_on() -> None:
    slow = [True]

    async def script(messages: list, info: Any) -> ModelResponse:
        if slow[0]:
            await asyncio.sleep(30)
        return ModelResponse(parts=[TextPart("on time")])

    session = session_with(script, {"request_timeout": 0.2})
    with pytest.raises(ModelRequestTimeout) as caught:
        turn(session, "hello?")
    failure = describe(caught.value, "scripted")
    assert failure.message == "scripted timed out after 0.2 s"
    assert "co config set request_timeout" in failure.hint
    slow[0] = False
    assert turn(session, "again").output == "on time"


def test_a_model_that_stalls_mid_answer_times_out_and_the_session_goes_on() -> None:
    from pydantic_ai.models.function import FunctionModel

    from co_core.agent.models import ResolvedModel

    stall = [True]

    async def stream(messages: list, info: Any) -> Any:
        yield "Hello, I am "
        if stall[0]:
            await asyncio.sleep(30)  # a local model that hangs halfway through its answer
        yield "back."

    session = session_with(lambda m, i: None, {"request_timeout": 0.3})
    model = FunctionModel(stream_function=stream, model_name="stalling")
    session.model = ResolvedModel(model, "stalling")
    seen: list[Any] = []

    async def on_event(event: Any) -> None:
        seen.append(event)

    started = time.monotonic()
    with pytest.raises(ModelRequestTimeout) as caught:
        asyncio.run(session.run_turn("hello?", on_event))
    assert time.monotonic() - started < 10  # the deadline, not the 30 s stall
    assert describe(caught.value, "stalling").message == "stalling timed out after 0.3 s"
    assert any(getattr(e, "event_kind", "") == "part_start" for e in seen)  # it was streaming
    stall[0] = False
    assert asyncio.run(session.run_turn("again")).output == "Hello, I am back."


def test_memory_across_turns() -> None:
    def script(messages: list, info: Any) -> ModelResponse:
        prompts = [
            p.content
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, UserPromptPart)
        ]
        answers = [p.content for m in messages if isinstance(m, ModelResponse) for p in m.parts]
        return ModelResponse(parts=[TextPart(f"prompts={prompts} answers={answers}")])

    session = session_with(script)
    turn(session, "my name is Ada")
    second = turn(session, "what is my name?")
    assert "'my name is Ada', 'what is my name?'" in second.output
    assert "prompts=['my name is Ada']" in second.output  # it saw its first answer too
    session.clear()
    assert turn(session, "again").output == "prompts=['again'] answers=[]"


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "lookup", "arguments": {"query": "red"}}',
        '```json\n{"name": "lookup", "arguments": {"query": "red"}}\n```',
        '<tool_call>\n{"name": "lookup", "arguments": {"query": "red"}}\n</tool_call>',
    ],
)
def test_tool_calls_written_as_text_are_run(text: str) -> None:
    def script(messages: list, info: Any) -> ModelResponse:
        last = last_part(messages)
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(last.content.display)])
        return ModelResponse(parts=[TextPart(text)])

    result = turn(session_with(script), "red?")
    assert result.output == "- red: https://example.org/red"
    assert [(c.tool, c.verdict, c.status) for c in result.calls] == [("lookup", "allow", "ok")]


def test_text_tool_calls_go_through_approval_too(tmp_path: Path) -> None:
    def script(messages: list, info: Any) -> ModelResponse:
        last = last_part(messages)
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(str(last.content))])
        return ModelResponse(
            parts=[TextPart('{"name": "write_note", "arguments": {"name": "n.txt", "text": "x"}}')]
        )

    session = session_with(script)
    session.deps.workspace = tmp_path
    result = turn(session, "write")
    assert "needs the user's approval" in result.output
    assert not (tmp_path / "n.txt").exists()


def test_text_that_is_not_a_known_tool_stays_text_and_setting_turns_recovery_off() -> None:
    unknown = '{"name": "rm_rf", "arguments": {}}'
    known = '{"name": "lookup", "arguments": {"query": "red"}}'

    def script(messages: list, info: Any) -> ModelResponse:
        return ModelResponse(
            parts=[TextPart(unknown if "unknown" in last_user_text(messages) else known)]
        )

    assert turn(session_with(script), "unknown").output == unknown
    off = session_with(script, {"text_tool_calls": False})
    result = turn(off, "known")
    assert result.output == known and result.calls == []


def test_approval_asked_for_writes_and_the_model_sees_the_answer(tmp_path: Path) -> None:
    asked: list[Any] = []

    def script(messages: list, info: Any) -> ModelResponse:
        last = last_part(messages)
        if isinstance(last, ToolReturnPart):
            return ModelResponse(parts=[TextPart(f"{last.outcome}: {last.content}")])
        name = last_user_text(messages)
        return ModelResponse(parts=[ToolCallPart("write_note", {"name": name, "text": "hello"})])

    answers = iter([(True, ""), (False, "not that file")])

    def approver(record: Any) -> tuple[bool, str]:
        asked.append((record.tool, record.call.permission_key, record.decision.effect))
        return next(answers)

    session = session_with(script, frontend=Asking(approver))
    session.deps.workspace = tmp_path
    first = turn(session, "a.txt")
    assert (tmp_path / "a.txt").read_text() == "hello"
    assert first.output.startswith("success: wrote 5 characters")
    assert [c.verdict for c in first.calls] == ["approved"]
    second = turn(session, "b.txt")
    assert not (tmp_path / "b.txt").exists()
    assert second.output == "denied: The user denied this call: not that file"
    assert [(c.verdict, c.status) for c in second.calls] == [("denied", "denied")]
    assert asked == [
        ("write_note", "fs:write:a.txt", "ask"),
        ("write_note", "fs:write:b.txt", "ask"),
    ]


def test_yolo_allows_without_asking(tmp_path: Path) -> None:
    def script(messages: list, info: Any) -> ModelResponse:
        if isinstance(last_part(messages), ToolReturnPart):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("write_note", {"name": "y.txt", "text": "z"})])

    session = session_with(script, yolo=True)
    session.deps.workspace = tmp_path
    result = turn(session, "go")
    assert (tmp_path / "y.txt").read_text() == "z"
    assert [(c.verdict, c.status) for c in result.calls] == [("allow", "ok")]


def test_cancelled_turn_leaves_no_dangling_tool_call() -> None:
    seen: list[Any] = []

    def script(messages: list, info: Any) -> ModelResponse:
        if last_user_text(messages) == "wait":
            return ModelResponse(parts=[ToolCallPart("slow", {"seconds": 30})])
        seen.extend(messages)
        return ModelResponse(parts=[TextPart("still here")])

    session = session_with(script)

    async def cancel_mid_run() -> None:
        task = asyncio.ensure_future(session.run_turn("wait"))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_mid_run())
    assert turn(session, "next").output == "still here"
    calls = {p.tool_call_id for m in seen for p in m.parts if isinstance(p, ToolCallPart)}
    returns = {p.tool_call_id for m in seen for p in m.parts if isinstance(p, ToolReturnPart)}
    assert calls and calls <= returns
    prompts = [p.content for m in seen for p in m.parts if isinstance(p, UserPromptPart)]
    assert prompts == ["wait", "next"]  # the cancelled question stays in the conversation
    said = [p.content for m in seen for p in m.parts if isinstance(p, ToolReturnPart)]
    assert said == ["Interrupted by user."]


def test_a_turn_ended_by_a_failing_tool_stores_the_failure_not_an_interruption() -> None:
    """Ctrl+C is "Interrupted by user."; a tool that failed says how it failed."""
    from co_core.sessions.history import INTERRUPTED
    from co_core.sessions.store import SessionStore

    tries = iter(range(10))

    def script(messages: list, info: Any) -> ModelResponse:
        if last_user_text(messages) == "try":  # a new value each time: not a repeated call
            return ModelResponse(parts=[ToolCallPart("always_wrong", {"value": f"v{next(tries)}"})])
        return ModelResponse(parts=[TextPart("fine")])

    session = session_with(script)
    with pytest.raises(UnexpectedModelBehavior):
        turn(session, "try")
    assert session.recorder is not None
    with SessionStore() as store:
        stored = store.load(session.recorder.info.id)
    returns = [p for m in stored for p in m.parts if isinstance(p, ToolReturnPart)]
    [last] = [p for p in returns if p.outcome != "retried"]  # v0, v1 were retried
    assert last.outcome == "failed"
    assert last.content.startswith("The tool failed: Tool 'always_wrong' exceeded max retries")
    assert INTERRUPTED not in str(stored)
    assert turn(session, "next").output == "fine"  # the history is valid for the next turn


def test_patch_dangling_answers_unanswered_calls() -> None:
    from co_core.sessions.history import INTERRUPTED, patch_dangling

    history = [
        ModelRequest(parts=[UserPromptPart("hi")]),
        ModelResponse(parts=[ToolCallPart("slow", {"seconds": 1}, tool_call_id="c1")]),
    ]
    patched = patch_dangling(history)
    assert len(patched) == 3
    part = patched[-1].parts[0]
    assert (part.tool_call_id, part.content, part.outcome) == ("c1", INTERRUPTED, "interrupted")
    assert patch_dangling(patched) == patched


def test_a_tool_that_fails_to_import_is_named_and_skipped() -> None:
    from co_core import hookimpl
    from co_core.testing import make_app

    class Broken:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register("co_no_such_module.tools:gone", risk="read")

    warnings: list[str] = []
    app = make_app({})
    app.warn = warnings.append
    app.host.register(Broken(), "broken")
    from co_core.agent.assembly.build import build_agent
    from co_core.agent.calls.pipeline import CallPipeline
    from co_core.agent.frontend import NoTerminal
    from co_core.policy.engine import PolicyEngine

    calls = CallPipeline(PolicyEngine.from_app(app, audit=False), NoTerminal())
    co = build_agent(app.host, app.settings, calls, warn=app.warn)
    assert "gone" not in co.specs and "lookup" in co.specs
    assert any("'gone'" in w and "broken" in w for w in warnings)
