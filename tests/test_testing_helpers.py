"""co_core.testing's helpers for plugin authors do what docs/plugins.md says."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, ModelRetry, RunContext
from pydantic_ai.models.function import FunctionModel

from co_core import ToolCall, hookimpl
from co_core.kernel.deps import CoDeps
from co_core.policy.audit import AuditLog
from co_core.testing import Approvals, audit_entries, run_turn, script_calls, use_plugin


class Echo:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(shout, risk="read")


def shout(ctx: RunContext[CoDeps], text: str) -> str:
    """Shout."""
    if not text:
        raise ModelRetry("text is empty")
    return text.upper()


def test_use_plugin_registers_for_the_block_only(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)

    def plugin_tools() -> list[tuple[str, str]]:  # Co's own (plugin "core") are always there
        return [(t.plugin, t.name) for t in app.host.tools() if t.plugin != "core"]

    with use_plugin(Echo(), name="echo") as app:
        assert plugin_tools() == [("echo", "shout")]
        assert [p.name for p in app.host.listed() if p.status == "loaded"] == ["echo"]
    assert plugin_tools() == []
    assert "CO_LOAD_PLUGINS" not in os.environ  # the environment is as it was


def test_use_plugin_can_keep_installed_plugins(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CO_LOAD_PLUGINS", "slack")
    with use_plugin(Echo(), name="echo", installed=True) as app:
        loaded = {p.name for p in app.host.listed() if p.status == "loaded"}
    assert loaded == {"echo", "slack"}
    assert os.environ["CO_LOAD_PLUGINS"] == "slack"


def test_script_calls_runs_tools_in_order_then_answers(co_dirs: Path) -> None:
    with use_plugin(Echo(), name="echo") as app:
        script = script_calls(
            ("shout", {"text": "hi"}),
            ("shout", {"text": ""}),
            answer=lambda results: " | ".join(r.splitlines()[0] for r in results),
        )
        agent = Agent(FunctionModel(script), deps_type=CoDeps, tools=[shout])
        output = agent.run_sync("go", deps=app.make_deps()).output
    assert output.startswith("HI | ")
    assert "text is empty" in output  # the retry text is what the model saw


def test_approvals_answer_and_remember_what_was_asked() -> None:
    post = ToolCall("post", "chat", {}, "chat:post:#a", "send")
    delete = ToolCall("delete", "fs", {}, "fs:delete:x", "write")
    by_tool = Approvals({"post": True})
    assert (by_tool.decide(post), by_tool.decide(delete)) == (True, False)
    assert by_tool.tools_asked == ["post", "delete"]
    assert Approvals().decide(post) is False  # default: deny, like co ask without a terminal
    assert Approvals(lambda call: call.risk == "write").decide(delete) is True


def test_audit_entries_are_per_session_and_redacted(co_dirs: Path) -> None:
    log = AuditLog("s1")
    log.write("execution", {"tool": "post", "permission": "chat:post:#a", "status": "ok"})
    log.write("decision", {"tool": "post", "arguments": {"token": "xoxb-1234567890-secret"}})
    AuditLog("s2").write("execution", {"tool": "x", "permission": "p:x", "status": "error"})
    assert [e["event"] for e in audit_entries("s1")] == ["execution", "decision"]
    assert [e["tool"] for e in audit_entries("s1", event="execution")] == ["post"]
    assert audit_entries("s1", event="decision")[0]["arguments"]["token"] == "[REDACTED]"
    assert {e["session"] for e in audit_entries()} == {"s1", "s2"}


WRITTEN: list[str] = []


def scribble(ctx: RunContext[CoDeps], text: str) -> str:
    """Write something down."""
    WRITTEN.append(text)
    return f"wrote {text}"


class Scribe:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(shout, risk="read")
        register(scribble, risk="write", permission="scribe:write:{text}")


def test_run_turn_answers_approvals_and_reports_calls(co_dirs: Path) -> None:
    WRITTEN.clear()
    script = script_calls(("shout", {"text": "hi"}), ("scribble", {"text": "note"}))
    with use_plugin(Scribe(), name="scribe") as app:
        yes = run_turn(app, "go", script, approvals=Approvals(True))
        no = run_turn(app, "go", script)  # default: deny, as in co ask without a terminal
    assert yes.output == "HI\nwrote note"
    assert yes.approvals.tools_asked == ["scribble"]  # the read ran without asking
    assert yes.approvals.asked[0].permission_key == "scribe:write:note"
    assert [c["status"] for c in yes.calls] == ["ok", "ok"]
    assert WRITTEN == ["note"]  # the denied turn wrote nothing
    assert no.output.startswith("HI\n") and "denied" in no.output
    assert [c["status"] for c in no.calls] == ["ok", "denied"]
    assert yes.session_id != no.session_id
