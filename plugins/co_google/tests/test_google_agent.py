"""The Google tools inside a real pydantic-ai agent, driven by a scripted model.

Co's own chat loop and policy engine are being built in parallel, so approval here uses
pydantic-ai's deferred-tool mechanism directly: tools the plugin declares with risk
"send" are given ``requires_approval=True``; the run stops with ``DeferredToolRequests``
and resumes with ``DeferredToolResults`` carrying the user's answer.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    Tool,
    ToolDenied,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

DRAFT_ARGS = {"to": "carol@example.com", "subject": "Minutes", "body": "Attached are the minutes."}


def google_specs() -> dict[str, Any]:
    from co_core.testing import make_app

    return {spec.name: spec for spec in make_app().host.tools() if spec.plugin == "google"}


def agent_with(script, specs) -> Agent:
    tools = [
        Tool(spec.load(), name=spec.name, requires_approval=spec.risk in ("send", "write"))
        for spec in specs.values()
    ]
    return Agent(FunctionModel(script), tools=tools, output_type=[str, DeferredToolRequests])


def last_parts(messages: list[ModelMessage]) -> list[Any]:
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    return list(request.parts)


def draft_script(seen: list[Any]):
    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        parts = last_parts(messages)
        returns = [p for p in parts if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("draft_email", DRAFT_ARGS, "call-1")])
        seen.append((returns[0].outcome, returns[0].content))
        return ModelResponse(parts=[TextPart(f"Done: {returns[0].content}")])

    return script


def test_the_plugin_declares_draft_email_as_send_with_a_recipient_key(co_dirs):
    specs = google_specs()
    assert specs["draft_email"].risk == "send"
    assert specs["draft_email"].permission_key(DRAFT_ARGS) == "gmail:draft:carol@example.com"
    assert specs["label_email"].risk == "write"
    assert {s.risk for n, s in specs.items() if n not in ("draft_email", "label_email")} == {"read"}


def test_draft_waits_for_approval_then_reaches_gmail(fake, deps):
    seen: list[Any] = []
    agent = agent_with(draft_script(seen), google_specs())

    first = agent.run_sync("Draft the minutes to Carol", deps=deps)
    assert isinstance(first.output, DeferredToolRequests)
    (asked,) = first.output.approvals
    assert asked.tool_name == "draft_email" and asked.args_as_dict() == DRAFT_ARGS
    assert fake.drafts == []  # nothing reached Gmail while the user was being asked

    second = agent.run_sync(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={asked.tool_call_id: True}),
        deps=deps,
    )
    assert len(fake.drafts) == 1 and fake.drafts[0]["raw"]
    assert "#drafts?compose=draft-msg-1" in second.output
    assert seen[0][0] == "success" and "not sent" in seen[0][1]


def test_denied_draft_never_reaches_gmail_and_the_model_hears_why(fake, deps):
    seen: list[Any] = []
    agent = agent_with(draft_script(seen), google_specs())
    first = agent.run_sync("Draft the minutes to Carol", deps=deps)
    (asked,) = first.output.approvals

    agent.run_sync(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(
            approvals={asked.tool_call_id: ToolDenied("The user declined: wrong recipient.")}
        ),
        deps=deps,
    )
    assert fake.drafts == []
    assert fake.reached("/gmail/") == []
    assert seen == [("denied", "The user declined: wrong recipient.")]


def test_bad_date_retry_reaches_the_model_which_fixes_the_call(fake, deps):
    fake.events = []
    hints: list[str] = []

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        parts = last_parts(messages)
        retry = [p for p in parts if isinstance(p, ToolReturnPart) and p.outcome == "retried"]
        done = [p for p in parts if isinstance(p, ToolReturnPart) and p.outcome == "success"]
        if done:
            return ModelResponse(parts=[TextPart(done[0].content.display)])
        if retry:
            hints.append(str(retry[0].content))
            args = {"start": "2026-03-10", "end": "2026-03-11"}
        else:
            args = {"start": "next tuesday"}
        return ModelResponse(parts=[ToolCallPart("list_calendar_events", args)])

    result = agent_with(script, google_specs()).run_sync("What's on next Tuesday?", deps=deps)
    assert "Use YYYY-MM-DD" in hints[0]
    assert result.output.startswith("No events")
    assert len(fake.reached("/calendar/v3/calendars/")) == 1


def test_model_asking_for_the_next_page_gets_it(fake, deps):
    for n in range(12):
        fake.drive_files[f"f{n}"] = {
            "id": f"f{n}",
            "name": f"Report {n:02d}",
            "mimeType": "text/plain",
            "text": "q3",
        }
    pages: list[Any] = []

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = [p for p in last_parts(messages) if isinstance(p, ToolReturnPart)]
        if done:
            pages.append(done[0].content)
            if done[0].content.has_more:
                next_page = done[0].content.next_page
                return ModelResponse(
                    parts=[ToolCallPart("search_drive", {"query": "report", "page": next_page})]
                )
            return ModelResponse(parts=[TextPart("listed")])
        return ModelResponse(parts=[ToolCallPart("search_drive", {"query": "report"})])

    agent_with(script, google_specs()).run_sync("find reports, all of them", deps=deps)
    assert [p.count for p in pages] == [10, 2]
    assert "Report 11" in pages[1].display and "Report 11" not in pages[0].display


def test_emails_read_in_parallel_in_one_turn_each_get_their_own_answer(fake, deps):
    """pydantic-ai runs a turn's read calls at the same time, in threads; httplib2 is not
    thread-safe, so each thread needs its own connection (google-api-python-client's
    thread-safety guide). Shared, the calls collide: wrong email, a hang, an AttributeError."""
    from fake_google import gmail_message

    ids = [f"m{n}" for n in range(8)]
    for n, msg_id in enumerate(ids):
        message = gmail_message(
            msg_id, sender=f"p{n}@example.com", subject=f"Subject {n}", plain=f"Body number {n}"
        )
        fake.messages[msg_id] = message
    seen: dict[str, str] = {}

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for p in last_parts(messages) if isinstance(p, ToolReturnPart)]
        if not returns:  # first the inbox, as a user would ask
            return ModelResponse(parts=[ToolCallPart("list_emails", {"limit": 10}, "list")])
        if returns[0].tool_name == "list_emails":  # then every email in it, all at once
            calls = [ToolCallPart("read_email", {"email_id": i}, f"call-{i}") for i in ids]
            return ModelResponse(parts=calls)
        seen.update({p.tool_call_id: str(p.content) for p in returns})
        return ModelResponse(parts=[TextPart("read them all")])

    result = agent_with(script, google_specs()).run_sync("read my inbox", deps=deps)
    assert result.output == "read them all"
    for n, msg_id in enumerate(ids):
        assert f"Subject: Subject {n}\n" in seen[f"call-{msg_id}"]
        assert f"Body number {n}" in seen[f"call-{msg_id}"]


def test_labelling_waits_for_approval(fake, deps):
    from fake_google import gmail_message

    fake.messages["m1"] = gmail_message("m1", sender="a@example.com", subject="Hi", plain="x")

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for p in last_parts(messages) if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart(str(returns[0].content))])
        args = {"email_id": "m1", "archive": True}
        return ModelResponse(parts=[ToolCallPart("label_email", args, "label-1")])

    agent = agent_with(script, google_specs())
    first = agent.run_sync("archive it", deps=deps)
    (asked,) = first.output.approvals
    assert asked.tool_name == "label_email" and fake.reached("/gmail/") == []
    second = agent.run_sync(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={asked.tool_call_id: True}),
        deps=deps,
    )
    assert second.output == "Conversation 'Hi' (1 email): archived it."
    assert "INBOX" not in fake.messages["m1"]["labelIds"]
