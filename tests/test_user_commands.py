"""The user's own slash commands (Markdown files), ``/init`` and ``/memory``, through the
REPL's commands and the real agent."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from helpers import Asking
from pydantic_ai.messages import ModelResponse, TextPart
from tinker_plugin import Tinker

from co_core.agent.commands import expand, load_commands
from co_core.agent.models import ResolvedModel
from co_core.kernel import trust
from co_core.testing import audit_entries, scripted_model, use_plugin
from co_core.ui.file_commands import TurnRequest
from co_core.ui.repl import Repl

pytestmark = pytest.mark.usefixtures("co_dirs")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


REVIEW = """---
description: Review a file for bugs
argument-hint: FILE
tools: [peek]
---
Review $1 for bugs. Focus on: $ARGUMENTS. Cost: $$5.
"""


@pytest.mark.parametrize(
    ("body", "arguments", "expected"),
    [
        ("Review $1 then $2.", "a.py b.py", "Review a.py then b.py."),
        ("All: $ARGUMENTS", '"x y" z', 'All: "x y" z'),
        ("First: $1", '"x y" z', "First: x y"),
        ("Missing: [$3]", "a", "Missing: []"),
        ("No placeholder.", "extra words", "No placeholder.\n\nextra words"),
        ("No placeholder.", "", "No placeholder."),
        ("Price $$1 and $1", "ten", "Price $1 and ten"),
        ("Unclosed: $1", '"oops', 'Unclosed: "oops'),
        ("$ARGUMENTSX stays", "a", "$ARGUMENTSX stays\n\na"),
    ],
)
def test_arguments_are_filled_in(body: str, arguments: str, expected: str) -> None:
    assert expand(body, arguments) == expected


def test_user_and_trusted_project_commands(co_dirs: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    write(co_dirs / "commands" / "review.md", REVIEW)
    write(co_dirs / "commands" / "git" / "commit.md", "Write a commit message.")
    write(project / ".co" / "commands" / "review.md", "The project's own review of $1.")
    found = load_commands(project)
    assert sorted(found.found) == ["git:commit", "review"]  # not trusted: the user's only
    assert "ignoring 1 command file in" in found.notices[0]
    assert f"run `co trust {project}`" in found.notices[0]
    trust.trust(project)
    found = load_commands(project)
    review = found.found["review"]
    assert (review.scope, review.body) == ("project", "The project's own review of $1.")
    assert found.notices == []


def test_a_broken_file_is_named_and_skipped(co_dirs: Path, tmp_path: Path) -> None:
    write(co_dirs / "commands" / "bad.md", "---\ndescription: [unclosed\n---\nbody")
    write(co_dirs / "commands" / "open.md", "---\ndescription: x\nbody")
    write(co_dirs / "commands" / "empty.md", "---\ndescription: nothing\n---\n")
    write(co_dirs / "commands" / "odd key.md", "x")
    write(co_dirs / "commands" / "typo.md", "---\ndescripton: x\n---\nbody")
    (co_dirs / "commands" / "link.md").symlink_to(co_dirs / "commands" / "typo.md")
    found = load_commands(tmp_path)
    notes = "\n".join(found.notices)
    assert "bad.md: skipped: front matter is not YAML" in notes
    assert "open.md: skipped: front matter has no closing --- line" in notes
    assert "empty.md: skipped: it has no prompt text" in notes
    assert "odd key.md: skipped: a command name is" in notes
    assert "link.md: skipped:" in notes and "symbolic link" in notes
    assert "typo.md: front matter key 'descripton' is not one Co reads" in notes
    assert sorted(found.found) == ["typo"]


def repl_in(ws: Path, model: Any, answer: Any = lambda r: (True, "")) -> Repl:
    context = use_plugin(Tinker(), name="tinker", cwd=ws)
    app = context.__enter__()
    repl = Repl(app)
    repl.conversation.frontend = Asking(answer)  # type: ignore[assignment]
    repl.conversation.model = ResolvedModel(scripted_model(model), "scripted")
    repl.conversation.prepare()
    repl._exit = context  # type: ignore[attr-defined]
    return repl


def done(repl: Repl) -> None:
    repl.conversation.close()
    repl._exit.__exit__(None, None, None)  # type: ignore[attr-defined]


class Offered:
    def __init__(self, answer: str = "ok") -> None:
        self.tools: list[list[str]] = []
        self.prompts: list[str] = []
        self.instructions: list[str] = []
        self.answer = answer

    def __call__(self, messages: list[Any], info: Any) -> ModelResponse:
        self.tools.append([t.name for t in info.function_tools])
        self.instructions.append(info.instructions or "")
        self.prompts.append(messages[-1].parts[-1].content)
        return ModelResponse(parts=[TextPart(self.answer)])


def test_a_command_runs_as_a_turn_with_only_its_tools(co_dirs: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write(co_dirs / "commands" / "review.md", REVIEW)
    model = Offered()
    repl = repl_in(ws, model)
    try:
        assert "review" in repl.commands and repl.commands["review"].turn
        assert "Review a file for bugs FILE (user: review.md)" == repl.commands["review"].help
        asked = repl.commands["review"].run("src/x.py speed")
        assert isinstance(asked, TurnRequest) and asked.tools == ("peek",)
        asyncio.run(repl.conversation.run_turn(asked.text, tools=asked.tools))
        asyncio.run(repl.conversation.run_turn("and now?"))  # the next turn: every tool
        session = repl.conversation.deps.session_id
    finally:
        done(repl)
    assert model.prompts[0] == "Review src/x.py for bugs. Focus on: src/x.py speed. Cost: $5."
    assert model.tools[0] == ["peek"]
    assert {"peek", "survey", "put", "execute_line"} <= set(model.tools[1])
    line = audit_entries(session, event="command")[0]
    assert (line["command"], line["scope"], line["tools"]) == ("review", "user", ["peek"])


def test_a_command_never_loosens_the_policy(co_dirs: Path, tmp_path: Path) -> None:
    """``tools`` names what may be offered: a write it names is still asked about."""
    from co_core.testing import script_calls

    ws = tmp_path / "ws"
    ws.mkdir()
    write(co_dirs / "commands" / "save.md", "---\ntools: [put]\n---\nSave $1.")
    asked: list[str] = []
    model = script_calls(("put", {"where": "n.txt", "body": "x"}))
    repl = repl_in(ws, model, answer=lambda r: asked.append(r.tool) or (False, "no"))
    try:
        request = repl.commands["save"].run("n.txt")
        asyncio.run(repl.conversation.run_turn(request.text, tools=request.tools))
    finally:
        done(repl)
    assert asked == ["put"] and not (ws / "n.txt").exists()


def test_init_drafts_and_writes_only_on_a_yes(co_dirs: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "pyproject.toml", '[project]\nname = "demo"\n')
    write(ws / "README.md", "# Demo\nA demo project.\n")
    for approved in (False, True):
        model = Offered("```markdown\n# Demo\n\nRun `uv run pytest`.\n```")
        repl = repl_in(ws, model, answer=lambda r, a=approved: (a, "not now"))
        try:
            request = repl.commands["init"].run("")
            assert isinstance(request, TurnRequest) and request.tools == ()
            result = asyncio.run(repl.conversation.run_turn(request.text, tools=request.tools))
            assert request.then is not None
            said = asyncio.run(request.then(result))
            session = repl.conversation.deps.session_id
        finally:
            done(repl)
        assert "pyproject.toml (first 60 lines):" in model.prompts[0]
        assert 'name = "demo"' in model.prompts[0] and "A demo project." in model.prompts[0]
        assert model.tools[0] == []  # drafted without tools
        decision = audit_entries(session, event="decision")[-1]
        assert (decision["tool"], decision["permission"], decision["effect"]) == (
            "put",
            "fs:write:AGENTS.md",
            "ask",
        )
        if not approved:
            assert not (ws / "AGENTS.md").exists() and said is not None
            assert "Not written" in said and "not now" in said
    assert (ws / "AGENTS.md").read_text() == "# Demo\n\nRun `uv run pytest`.\n"
    repl = repl_in(ws, Offered())
    try:
        assert "exists: edit it" in repl.commands["init"].run("")  # never overwritten
    finally:
        done(repl)


def test_memory_command_shows_adds_and_edits(
    co_dirs: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    repl = repl_in(ws, Offered())
    try:
        memory = repl.commands["memory"].run
        assert "No memory yet" in memory("")
        assert (
            memory("add use uv, not pip")
            == f"Remembered in {co_dirs / 'memory.md'}: use uv, not pip"
        )
        assert "- use uv, not pip" in memory("")
        assert "not a trusted project" in str(_raises(lambda: memory("add --project x")))
        editor = tmp_path / "editor.sh"
        editor.write_text('#!/bin/sh\necho "- edited by hand" >> "$1"\n')
        editor.chmod(0o755)
        monkeypatch.setenv("EDITOR", str(editor))
        assert "saved" in memory("edit")
        assert "- edited by hand" in memory("")
        assert memory("frobnicate").startswith("usage: /memory")
        session = repl.conversation.deps.session_id
    finally:
        done(repl)
    lines = audit_entries(session, event="memory")
    assert [(e["action"], e["scope"]) for e in lines] == [("add", "user"), ("edit", "user")]


def _raises(run: Any) -> BaseException:
    try:
        run()
    except BaseException as exc:
        return exc
    raise AssertionError("did not raise")


def test_init_drafts_without_the_users_memory(co_dirs: Path, tmp_path: Path) -> None:
    """The draft is the project's shared file: the model drafting it is not told the
    user's own memory (which every other turn is), so no private line can end up in it."""
    from co_core.agent.memory import append

    ws = tmp_path / "ws"
    write(ws / "README.md", "# Demo\n")
    append("user", "my manager is Bob; the VPN is vpn.corp.example", ws)
    model = Offered("# Demo\n\nRun `make test`.\n")
    repl = repl_in(ws, model)
    try:
        asyncio.run(repl._slash_turn(repl.commands["init"], ""))  # as typed at the prompt
        asyncio.run(repl.conversation.run_turn("and now?"))
    finally:
        done(repl)
    drafting, after = model.instructions
    assert "Bob" not in drafting and "README.md" in model.prompts[0]
    assert "my manager is Bob" in after  # every other turn is told it
    assert (ws / "AGENTS.md").read_text() == "# Demo\n\nRun `make test`.\n"
