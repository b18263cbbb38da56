"""``!cmd`` and ``@path``: calls the user makes himself, through the real call pipeline and
policy, with a plugin whose tools and arguments are named unlike co-shell's (tinker)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import Asking
from pydantic_ai.messages import ModelResponse, TextPart, UserPromptPart
from tinker_plugin import Tinker

from co_core import hookimpl
from co_core.agent.conversation import Conversation
from co_core.agent.mentions import MentionRefused, expand, find
from co_core.agent.models import ResolvedModel
from co_core.agent.tools.kinds import NoTool, choose
from co_core.testing import audit_entries, scripted_model, use_plugin
from co_core.ui import bang

pytestmark = pytest.mark.usefixtures("co_dirs")


def never_asked(record: Any) -> Any:
    raise AssertionError(f"the user was asked about {record.tool}")


class Seen:
    """A scripted model that keeps every request's user prompts."""

    def __init__(self) -> None:
        self.prompts: list[list[str]] = []

    def __call__(self, messages: list[Any], info: Any) -> ModelResponse:
        self.prompts.append(
            [
                p.content
                for m in messages
                for p in getattr(m, "parts", [])
                if isinstance(p, UserPromptPart) and isinstance(p.content, str)
            ]
        )
        return ModelResponse(parts=[TextPart("ok")])


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace: a folder of its own (Co's own folders are beside it)."""
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.fixture
def session(ws: Path) -> Iterator[Any]:
    """``session(settings=None, answer=never_asked)`` -> a prepared conversation."""
    opened: list[Conversation] = []
    contexts: list[Any] = []

    def make(settings: dict[str, Any] | None = None, answer: Any = never_asked) -> Conversation:
        context = use_plugin(Tinker(), name="tinker", settings=settings or {}, cwd=ws)
        contexts.append(context)
        app = context.__enter__()
        conversation = Conversation(app, frontend=Asking(answer))  # type: ignore[arg-type]
        conversation.model = ResolvedModel(scripted_model(seen), "scripted")
        conversation.prepare()
        opened.append(conversation)
        return conversation

    seen = Seen()
    make.seen = seen  # type: ignore[attr-defined]
    yield make
    for conversation in opened:
        conversation.close()
    for context in contexts:
        context.__exit__(None, None, None)


# -- ! ---------------------------------------------------------------------------------


def test_bang_runs_unasked_and_joins_the_conversation(session: Any, ws: Path) -> None:
    (ws / "a.txt").write_text("x")
    conversation = session()
    done = asyncio.run(bang.run(conversation, "echo hi there && ls"))
    assert done.ok and done.tool == "execute_line"
    assert done.text == "hi there\na.txt"
    asyncio.run(conversation.run_turn("what did it print?"))
    sent = session.seen.prompts[-1]
    assert any("$ echo hi there && ls\nhi there\na.txt" in p for p in sent)
    assert sent[-1] == "what did it print?"
    session_id = conversation.deps.session_id
    decision, answer, execution = audit_entries(session_id)[:3]
    assert (decision["event"], decision["permission"], decision["effect"]) == (
        "decision",
        "shell:exec:echo hi there && ls",
        "ask",
    )  # the policy would ask; the user typed it, so the typing is the yes
    assert (answer["event"], answer["source"], answer["reason"]) == (
        "answer",
        "typed",
        "typed at the prompt",
    )
    assert (execution["event"], execution["status"]) == ("execution", "ok")


def test_bang_keeps_no_grant_so_the_model_is_still_asked(session: Any, ws: Path) -> None:
    asked: list[str] = []
    conversation = session(answer=lambda record: asked.append(record.tool) or (False, "no"))
    asyncio.run(bang.run(conversation, "touch made.txt"))
    assert (ws / "made.txt").exists()
    engine = conversation.ready().calls.engine
    call = engine.make_call("execute_line", {"line": "touch made.txt"})
    assert engine.decide(call).effect == "ask"


def test_a_deny_rule_holds_for_bang(session: Any, ws: Path) -> None:
    (ws / "keep.txt").write_text("precious")
    rules = [{"match": "shell:exec:rm *", "effect": "deny", "reason": "nothing is deleted here"}]
    conversation = session({"policy": {"rules": rules}})
    done = asyncio.run(bang.run(conversation, "rm keep.txt"))
    assert not done.ok and done.status == "denied"
    assert "nothing is deleted here" in done.text
    assert (ws / "keep.txt").read_text() == "precious"
    note = conversation.history[-1].parts[0].content
    assert "It was not run" in note and "nothing is deleted here" in note


def test_a_compound_command_is_decided_part_by_part(session: Any, ws: Path) -> None:
    rules = [{"match": "shell:exec:curl *", "effect": "deny", "reason": "no network"}]
    conversation = session({"policy": {"rules": rules}})
    done = asyncio.run(bang.run(conversation, "echo ok && curl http://example.org"))
    assert done.status == "denied" and "no network" in done.text


# -- @ ---------------------------------------------------------------------------------


def test_mentions_are_found_as_written() -> None:
    text = 'see @notes.txt, @"my notes.md" and (@src/) but not ada@example.com or @@'
    assert [m.path for m in find(text)] == ["notes.txt", "my notes.md", "src/", "@"]
    assert [m.written for m in find("read @a.txt.")] == ["@a.txt"]


def test_a_mentioned_file_and_folder_join_the_message(session: Any, ws: Path) -> None:
    (ws / "notes.txt").write_text("Meeting in room B-204.\n")
    (ws / "src").mkdir()
    (ws / "src" / "main.py").write_text("print(1)\n")
    conversation = session()
    text = asyncio.run(expand(conversation, "summarise @notes.txt and @src please, @ada"))
    assert text == (
        "summarise @notes.txt and @src please, @ada\n\n"
        '<file path="notes.txt">\nMeeting in room B-204.\n</file>\n\n'
        '<folder path="src">\nmain.py\n</folder>'
    )
    entries = audit_entries(conversation.deps.session_id, event="decision")
    assert [(e["tool"], e["permission"], e["effect"]) for e in entries] == [
        ("peek", "fs:read:notes.txt", "allow"),
        ("survey", "fs:read:src", "allow"),
    ]


def test_a_denied_file_is_refused_with_the_rules_reason(session: Any, ws: Path) -> None:
    (ws / ".env").write_text("TOKEN=abc\n")
    rules = [{"match": "fs:read:.env", "effect": "deny", "reason": "secrets stay out"}]
    conversation = session({"policy": {"rules": rules}})
    with pytest.raises(MentionRefused, match="secrets stay out.*the message was not sent"):
        asyncio.run(expand(conversation, "what is in @.env"))
    assert session.seen.prompts == []  # nothing reached the model


def test_a_mention_spelled_another_way_is_decided_as_resolved(session: Any, ws: Path) -> None:
    (ws / "private").mkdir()
    (ws / "private" / "plan.md").write_text("plan")
    rules = [{"match": "fs:read:private/**", "effect": "deny", "reason": "private"}]
    conversation = session({"policy": {"rules": rules}})
    for spelled in ("private/plan.md", "./private/plan.md", "private/../private/plan.md"):
        with pytest.raises(MentionRefused, match="private"):
            asyncio.run(expand(conversation, f"read @{spelled}"))


def test_a_mention_outside_the_workspace_is_refused(session: Any, ws: Path) -> None:
    (ws / "link").symlink_to("/etc/hostname")
    conversation = session()
    with pytest.raises(MentionRefused, match="outside the workspace"):
        asyncio.run(expand(conversation, "show @link"))


def test_a_file_the_rules_ask_about_is_read_unasked(session: Any, ws: Path) -> None:
    (ws / "draft.md").write_text("draft")
    rules = [{"match": "fs:read:draft.md", "effect": "ask"}]
    conversation = session({"policy": {"rules": rules}})
    text = asyncio.run(expand(conversation, "check @draft.md"))
    assert text.endswith('<file path="draft.md">\ndraft\n</file>')
    answer = audit_entries(conversation.deps.session_id, event="answer")[0]
    assert answer["source"] == "typed"


# -- which tool ------------------------------------------------------------------------


class TwoShells:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(
            "tinker_plugin:execute_line",
            name="other_line",
            risk="exec",
            permission="shell:exec:{line}",
        )


def test_two_tools_for_one_job_are_named_not_guessed(tmp_path: Path) -> None:
    with use_plugin(Tinker(), name="tinker", cwd=tmp_path) as app:
        app.host.register(TwoShells(), "twoshells")
        try:
            with pytest.raises(NoTool, match="several tools runs shell commands: execute_line"):
                choose(app.host.tools(), "run")
            assert choose(app.host.tools(), "read").spec.name == "peek"
            assert choose(app.host.tools(), "list").spec.name == "survey"
            writer = choose(app.host.tools(), "write")
            assert (writer.spec.name, writer.argument, writer.content) == ("put", "where", "body")
        finally:
            app.host.unregister("twoshells")


def test_no_tool_for_a_job_says_so(tmp_path: Path) -> None:
    with use_plugin(object(), name="nothing", cwd=tmp_path) as app:
        with pytest.raises(NoTool, match="no installed tool runs shell commands"):
            choose(app.host.tools(), "run")


# -- listing the workspace for Tab ------------------------------------------------------


def test_listing_files_starts_no_program_a_repository_names(tmp_path: Path) -> None:
    """A repository's ``core.fsmonitor`` is a program git runs on ``ls-files``: plain git
    runs it (the check can fail), Co's listing does not."""
    import subprocess

    from co_core.kernel.gitfiles import workspace_files

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("a")
    (repo / "skip.log").write_text("b")
    (repo / ".gitignore").write_text("*.log\n")
    subprocess.run(["git", "-C", str(repo), "add", "a.txt"], check=True)
    marker = tmp_path / "ran"
    hook = tmp_path / "fsmonitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    hook.chmod(0o755)
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", str(hook)], check=True)
    assert workspace_files(repo) == [".gitignore", "a.txt"]
    assert not marker.exists()
    subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True)
    assert marker.exists()  # what the listing kept from running


def test_completion_offers_one_segment_at_a_time() -> None:
    from co_core.ui.completion import entries

    files = ["README.md", "src/main.py", "src/lib/util.py", "tests/test_x.py"]
    assert entries(files, "") == ["README.md", "src/", "tests/"]
    assert entries(files, "src/") == ["src/lib/", "src/main.py"]


def test_completion_answers_from_the_last_listing_while_a_new_one_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the first listing is waited for: a later keystroke is answered at once from the
    last one while git lists again, so a Tab is never lost behind a slow listing."""
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from co_core.ui import completion

    (tmp_path / "first.txt").write_text("1")
    completer = completion.MentionCompleter(tmp_path)

    def names(text: str) -> list[str]:
        found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
        return [c.text for c in found]

    assert names("see @f") == ["@first.txt"]
    (tmp_path / "fresh.txt").write_text("2")
    assert names("see @f") == ["@first.txt"]  # kept for a while
    monkeypatch.setattr(completion, "KEEP", 0.0)
    assert names("see @f") == ["@first.txt"]  # stale: answered at once, a new listing starts
    for thread in [t for t in threading.enumerate() if t.name == "co-complete"]:
        thread.join(timeout=30)
    assert names("see @f") == ["@first.txt", "@fresh.txt"]
