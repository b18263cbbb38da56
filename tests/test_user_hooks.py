"""The user's hooks: real commands on the host, JSON on stdin, through the real agent."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import Asking
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from tinker_plugin import Tinker

from co_core.agent.conversation import Conversation
from co_core.agent.models import ResolvedModel
from co_core.agent.session_files import PromptDenied
from co_core.kernel import trust
from co_core.kernel.errors import SettingsError
from co_core.testing import audit_entries, run_co, scripted_model, use_plugin

pytestmark = pytest.mark.usefixtures("co_dirs")
PY = sys.executable


def hook(script: str, **more: Any) -> dict[str, Any]:
    """A hook running a Python snippet (the event's JSON is ``event``)."""
    code = "import json,sys; event=json.load(sys.stdin)\n" + script
    return {"command": f"{PY} -c {shlex.quote(code)}", **more}


class Script:
    def __init__(self, *calls: tuple[str, dict[str, Any]]) -> None:
        self.calls = list(calls)
        self.seen: list[str] = []  # what the model got back, in order
        self.prompts: list[str] = []

    def __call__(self, messages: list[Any], info: Any) -> ModelResponse:
        last = messages[-1].parts[-1]
        kind = getattr(last, "part_kind", "")
        if kind in ("tool-return", "retry-prompt"):
            self.seen.append(str(getattr(last, "content", "")))
        elif kind == "user-prompt":
            self.prompts.append(str(last.content))
        if self.calls:
            tool, args = self.calls.pop(0)
            return ModelResponse(parts=[ToolCallPart(tool, args)])
        return ModelResponse(parts=[TextPart("done")])


def run(
    ws: Path, hooks: dict[str, Any], model: Script, prompt: str = "go", answer: Any = None,
    **settings: Any,
) -> tuple[Any, Asking, str, list[str]]:  # fmt: skip
    warned: list[str] = []
    frontend = Asking(answer or (lambda record: (True, "")))
    frontend.warn = warned.append  # type: ignore[method-assign]
    with use_plugin(Tinker(), name="tinker", settings={"hooks": hooks, **settings}, cwd=ws) as app:
        conversation = Conversation(app, frontend=frontend)  # type: ignore[arg-type]
        conversation.model = ResolvedModel(scripted_model(model), "scripted")
        conversation.prepare()
        try:
            result = asyncio.run(conversation.run_turn(prompt))
            session = conversation.deps.session_id
        finally:
            conversation.close()
    return result, frontend, session, warned


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha")
    return folder


def test_before_tool_gets_the_call_and_can_deny_it(ws: Path, tmp_path: Path) -> None:
    got = tmp_path / "event.json"
    deny = hook(
        f"open({str(got)!r}, 'w').write(json.dumps(event))\n"
        "print(json.dumps({'decision': 'deny', 'reason': 'no deleting on Fridays'}))",
        match="shell:exec:rm *",
    )
    model = Script(("execute_line", {"line": "rm a.txt"}))
    result, frontend, session, warned = run(ws, {"before_tool": [deny]}, model)
    event = json.loads(got.read_text())
    assert event["event"] == "before_tool" and event["tool"] == "execute_line"
    assert event["permission"] == "shell:exec:rm a.txt"
    assert event["arguments"] == {"line": "rm a.txt"}
    assert event["decision"]["effect"] == "ask" and event["cwd"] == str(ws)
    assert (ws / "a.txt").exists()  # it never ran, and nobody was asked
    assert result.calls[0].status == "denied" and warned == []
    assert "no deleting on Fridays" in model.seen[0]  # the model sees the reason
    decision = audit_entries(session, event="decision")[0]
    assert (decision["effect"], decision["source"]) == ("deny", "hook")
    assert [e["hook_event"] for e in audit_entries(session, event="hook")] == ["before_tool"]
    shown = run_co("audit", "--session", session, env={"COLUMNS": "250"}).stdout
    assert "no deleting on Fridays" in shown and "(before_tool)" in shown  # co audit says it


def test_exit_2_denies_with_stderr_as_the_reason(ws: Path) -> None:
    deny = hook("sys.stderr.write('blocked by the hook'); sys.exit(2)")
    model = Script(("peek", {"where": "a.txt"}))
    result, *_ = run(ws, {"before_tool": [deny]}, model)
    assert result.calls[0].status == "denied" and "blocked by the hook" in model.seen[0]


def test_a_hook_makes_an_allowed_read_ask(ws: Path) -> None:
    ask = hook("print(json.dumps({'decision': 'ask', 'reason': 'a.txt is sensitive'}))")
    asked: list[str] = []
    model = Script(("peek", {"where": "a.txt"}))

    def answer(record: Any) -> tuple[bool, str]:
        asked.append(record.decision.reason)
        return (False, "no")

    result, *_ = run(ws, {"before_tool": [ask]}, model, answer=answer)
    assert len(asked) == 1 and asked[0].startswith("hook '")  # asked, saying why
    assert asked[0].endswith(": a.txt is sensitive")
    assert result.calls[0].status == "denied"


@pytest.mark.parametrize("says", ["allow", "approve", "nothing"])
def test_a_hook_never_allows_what_the_policy_does_not(ws: Path, says: str) -> None:
    out = "" if says == "nothing" else f"print(json.dumps({{'decision': {says!r}}}))"
    allow = hook(out or "pass")
    rules = [{"match": "shell:exec:rm *", "effect": "deny", "reason": "never rm"}]
    model = Script(("execute_line", {"line": "rm a.txt"}), ("put", {"where": "b.txt", "body": "x"}))
    asked: list[str] = []
    result, *_ = run(
        ws, {"before_tool": [allow]}, model, answer=lambda r: asked.append(r.tool) or (False, "n"),
        policy={"rules": rules},
    )  # fmt: skip
    assert [c.status for c in result.calls] == ["denied", "denied"]
    assert "never rm" in model.seen[0]  # the policy's deny holds
    assert asked == ["put"]  # the write still asked
    assert (ws / "a.txt").exists() and not (ws / "b.txt").exists()


def test_a_failing_or_slow_hook_is_named_and_the_turn_goes_on(ws: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    slow = hook(
        f"import os,time; open({str(pidfile)!r},'w').write(str(os.getpid())); time.sleep(60)",
        timeout=1,
        name="slow-check",
    )
    broken = {"command": "exit 7", "name": "broken"}
    garbled = {"command": "echo '{not json'", "name": "garbled"}
    model = Script(("peek", {"where": "a.txt"}))
    start = time.monotonic()
    result, _, _, warned = run(ws, {"before_tool": [slow, broken, garbled]}, model)
    assert time.monotonic() - start < 30
    assert result.calls[0].status == "ok" and result.output == "done"
    assert warned == [
        "hook 'slow-check' (before_tool) timed out after 1 s; going on without it",
        "hook 'broken' (before_tool) failed (exit 7); going on without it",
        "hook 'garbled' (before_tool) wrote output that is not JSON; going on without it",
    ]
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while running(pid) and time.monotonic() < deadline:  # killed, with what it started
        time.sleep(0.05)
    assert not running(pid)


def running(pid: int) -> bool:
    """Is ``pid`` a live process (not gone, not a zombie waiting for its parent)?"""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_prompt_hooks_add_context_or_keep_the_words_back(ws: Path) -> None:
    context = hook("print('The branch is main.') if 'branch' in event['prompt'] else None")
    model = Script()
    run(ws, {"prompt": [context]}, model, prompt="which branch?")
    assert model.prompts == ["which branch?\n\nThe branch is main."]
    deny = hook("print(json.dumps({'decision': 'deny', 'reason': 'no secrets'}))")
    with pytest.raises(PromptDenied, match="not sent to the model: hook .*: no secrets"):
        run(ws, {"prompt": [deny]}, Script(), prompt="my password is x")


def test_after_tool_turn_end_and_session_start(ws: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    record = hook(f"open({str(log)!r}, 'a').write(json.dumps(event) + '\\n')")
    start = hook("print('Today is a holiday.')")
    model = Script(("peek", {"where": "a.txt"}))
    hooks = {"after_tool": [record], "turn_end": [record], "session_start": [record, start]}
    run(ws, hooks, model)
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["event"] for e in events] == ["session_start", "after_tool", "turn_end"]
    assert events[0]["source"] == "chat"
    assert (events[1]["tool"], events[1]["status"], events[1]["result"]) == ("peek", "ok", "alpha")
    assert (events[2]["status"], events[2]["output"], events[2]["tool_calls"]) == ("ok", "done", 1)


def test_session_start_context_reaches_the_model(ws: Path) -> None:
    told: list[str] = []

    def model(messages: list[Any], info: Any) -> ModelResponse:
        told.append(info.instructions or "")
        return ModelResponse(parts=[TextPart("ok")])

    start = hook("print('The deploy freeze is on.')")
    with use_plugin(
        Tinker(), name="tinker", settings={"hooks": {"session_start": [start]}}, cwd=ws
    ) as app:
        conversation = Conversation(app)
        conversation.model = ResolvedModel(scripted_model(model), "scripted")
        conversation.prepare()
        try:
            asyncio.run(conversation.run_turn("hi"))
        finally:
            conversation.close()
    assert "The deploy freeze is on." in told[0]


def project_with_hook(tmp_path: Path, marker: Path) -> Path:
    project = tmp_path / "cloned"
    (project / ".co").mkdir(parents=True)
    planted = {"hooks": {"session_start": [{"command": f"touch {marker}"}]}}
    (project / ".co" / "settings.json").write_text(json.dumps(planted))
    return project


def test_an_untrusted_projects_hooks_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    project = project_with_hook(tmp_path, marker)
    run(project, {}, Script())
    assert not marker.exists()
    trust.trust(project)
    run(project, {}, Script())
    assert marker.exists()


def test_a_trusted_project_adds_its_hooks_after_the_users(tmp_path: Path) -> None:
    order = tmp_path / "order"
    project = tmp_path / "proj"
    (project / ".co").mkdir(parents=True)
    mine = {"hooks": {"turn_end": [{"command": f"echo project >> {order}"}]}}
    (project / ".co" / "settings.json").write_text(json.dumps(mine))
    trust.trust(project)
    run(project, {"turn_end": [{"command": f"echo user >> {order}"}]}, Script())
    assert order.read_text().split() == ["user", "project"]


def test_a_bad_hook_setting_names_the_file_and_key(ws: Path) -> None:
    with pytest.raises(
        SettingsError, match=r"settings.json: hooks\.before_tool: Input should be a valid number"
    ):
        run(ws, {"before_tool": [{"command": "true", "timeout": "soon"}]}, Script())


def test_status_lists_the_hooks_that_run_on_this_machine(co_dirs: Path, ws: Path) -> None:
    (co_dirs / "settings.json").write_text(
        json.dumps({"hooks": {"turn_end": [{"command": "notify-send done"}]}})
    )
    result = run_co("status", "--json", cwd=ws, env={"CO_LOAD_PLUGINS": ""})
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert "turn_end: notify-send done" in rows["hooks"]["detail"]
    assert "not sandboxed" in rows["hooks"]["detail"]
