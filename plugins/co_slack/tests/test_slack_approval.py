"""Approval end to end: a scripted model asks to post; nothing reaches Slack until approved.

The core's policy engine and chat loop are being built in parallel, so this drives
pydantic-ai's deferred-approval mechanism directly, the way the chat loop will: tools
whose declared risk is "send" get ``requires_approval=True``, a run that wants one ends
with ``DeferredToolRequests``, and the next run carries the decision in
``DeferredToolResults``.
"""

from __future__ import annotations

from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    Tool,
    ToolApproved,
    ToolDenied,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_core import CoDeps
from co_core.testing import make_app


def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Read #general, then post a summary to #releases, then report what came back."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    for part in last.parts:
        if isinstance(part, ToolReturnPart) and part.tool_name == "post_slack_message":
            return ModelResponse(parts=[TextPart(f"post: {part.content}")])
        if isinstance(part, RetryPromptPart):
            return ModelResponse(parts=[TextPart(f"retry: {part.content}")])
        if isinstance(part, ToolReturnPart) and part.tool_name == "read_slack_channel":
            args = {"channel": "#releases", "text": "Release train leaves Friday"}
            return ModelResponse(parts=[ToolCallPart("post_slack_message", args, "post-1")])
    return ModelResponse(parts=[ToolCallPart("read_slack_channel", {"channel": "general"}, "r-1")])


def agent_and_deps(settings=None):
    """An agent built from the plugin's declarations, as the core will build it."""
    app = make_app(settings)
    tools = [
        Tool(spec.load(), name=spec.name, requires_approval=spec.risk in ("send", "write", "exec"))
        for spec in app.host.tools()
        if spec.plugin == "slack"
    ]
    agent = Agent(
        FunctionModel(script),
        deps_type=CoDeps,
        output_type=[str, DeferredToolRequests],
        tools=tools,
    )
    return agent, app.make_deps()


def ask_to_post(agent, deps):
    first = agent.run_sync("tell #releases what #general says", deps=deps)
    assert isinstance(first.output, DeferredToolRequests)
    (call,) = first.output.approvals
    assert call.tool_name == "post_slack_message"
    assert call.args_as_dict()["channel"] == "#releases"
    return first, call


def test_the_plugin_declares_posting_as_a_send_with_a_channel_permission(slack_env):
    specs = {s.name: s for s in make_app().host.tools() if s.plugin == "slack"}
    post = specs["post_slack_message"]
    assert post.risk == "send"
    assert post.permission_key({"channel": "#releases", "text": "x"}) == "slack:post:#releases"
    assert specs["read_slack_channel"].risk == specs["list_slack_channels"].risk == "read"


def test_denied_post_never_reaches_slack(slack_env, fake):
    agent, deps = agent_and_deps()
    first, call = ask_to_post(agent, deps)
    assert fake.calls("conversations.history")  # the read ran without asking
    assert fake.posted == []  # the post is waiting for a decision

    results = DeferredToolResults(approvals={call.tool_call_id: ToolDenied("The user said no.")})
    final = agent.run_sync(
        message_history=first.all_messages(), deferred_tool_results=results, deps=deps
    )
    assert final.output == "post: The user said no."  # the model sees the denial
    assert fake.posted == []
    assert not any(r.method.startswith("chat.") for r in fake.requests)


def test_approved_post_reaches_slack_and_the_model_gets_the_link(slack_env, fake):
    agent, deps = agent_and_deps()
    first, call = ask_to_post(agent, deps)

    results = DeferredToolResults(approvals={call.tool_call_id: ToolApproved()})
    final = agent.run_sync(
        message_history=first.all_messages(), deferred_tool_results=results, deps=deps
    )
    (post,) = fake.posted
    assert post.params == {"channel": "C0RELEASE1", "markdown_text": "Release train leaves Friday"}
    assert final.output.startswith("post: Posted to #releases: https://acme.slack.com/archives/")


def test_an_approved_post_to_a_channel_the_bot_is_not_in_comes_back_as_a_hint(slack_env, fake):
    agent, deps = agent_and_deps()
    first, call = ask_to_post(agent, deps)
    fake.channels[-1]["is_member"] = False  # someone removed the bot from #releases

    results = DeferredToolResults(approvals={call.tool_call_id: True})
    final = agent.run_sync(
        message_history=first.all_messages(), deferred_tool_results=results, deps=deps
    )
    # pydantic-ai hands the ModelRetry text back as the resumed call's return
    assert "not a member of channel '#releases'" in final.output and "/invite" in final.output
    assert fake.history.get("C0RELEASE1", []) == []
