"""Attacks on the promise that nothing happens without the user's say-so.

Each family spells one target several hostile ways and drives a real turn (Co's agent,
policy engine, audit trail and the bundled plugins' real tools) with nobody at a
terminal, as ``co ask`` runs: the key decided must name the real target, and nothing the
rules forbid may happen. The last test walks every registered tool: a tool whose
arguments name a target must resolve it, and every spelling must give one key.
"""

from __future__ import annotations

import json
import os
import subprocess
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import shell_corpus
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo

from co_core.testing import make_app, run_turn, script_calls

SECRET = "TOP-SECRET-4417"


@pytest.fixture
def workspace() -> Iterator[Path]:
    import shutil

    from shell_testlib import chown_tree, make_workspace

    root = make_workspace()  # one the sandbox's user (uid 1000 under root) can enter
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "x").write_text(SECRET)
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / "Makefile").write_text("all:\n\ttrue\n")
    (root / "link-to-secrets").symlink_to(root / "secrets")
    (root / "src" / "link-to-root").symlink_to(root)
    chown_tree(root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def turn_in(workspace: Path, settings: dict[str, Any], *calls: tuple[str, dict[str, Any]]) -> Any:
    app = make_app({"shell": {"sandbox": "bubblewrap"}, **settings}, cwd=workspace)
    return run_turn(app, "go", script_calls(*calls), headless=True)


def all_at_once(*calls: tuple[str, dict[str, Any]]) -> Any:
    """The model asks for every call in one response (Co's loop guard stops a model that
    keeps calling after three failures in a row, so one call per step would end early)."""
    relay = script_calls()  # no calls of its own: answers with the results it has seen

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not any(isinstance(m, ModelResponse) for m in messages):
            return ModelResponse(parts=[ToolCallPart(tool, dict(args)) for tool, args in calls])
        return relay(messages, info)

    return script


# -- paths: one file, many spellings --------------------------------------------------------


def spellings(workspace: Path) -> list[str]:
    return [
        "secrets/x",
        "./secrets/x",
        "/workspace/secrets/x",
        str(workspace / "secrets" / "x"),
        "src/../secrets/x",
        "secrets//x",
        "link-to-secrets/x",
        "src/link-to-root/secrets/x",
    ]


def test_a_read_deny_rule_holds_for_every_spelling_of_the_path(
    co_dirs: Path, workspace: Path
) -> None:
    deny = {"policy": {"rules": [{"match": "fs:read:secrets/**", "effect": "deny"}]}}
    calls = [("read_file", {"path": path}) for path in spellings(workspace)]
    app = make_app({"shell": {"sandbox": "bubblewrap"}, **deny}, cwd=workspace)
    turn = run_turn(app, "go", all_at_once(*calls), headless=True)
    assert SECRET not in turn.output
    assert [(c["permission"], c["status"]) for c in turn.calls] == [
        ("fs:read:secrets/x", "denied")
    ] * len(calls)
    written = [d["as_written"]["path"] for d in turn.audit("decision") if "as_written" in d]
    assert len(written) == len(calls) - 1  # each hostile spelling is in the audit trail too


def test_an_allowed_folder_does_not_stretch_to_where_a_path_really_leads(
    co_dirs: Path, workspace: Path
) -> None:
    allow = {"policy": {"rules": [{"match": "fs:write:src/**", "effect": "allow"}]}}
    app = make_app({"shell": {"sandbox": "bubblewrap"}, **allow}, cwd=workspace)
    calls = all_at_once(  # one step after another, the second would be a repeat (loop guard)
        ("write_file", {"path": "src/../Makefile", "content": "pwned"}),
        ("write_file", {"path": "src/link-to-root/Makefile", "content": "pwned"}),
        ("write_file", {"path": "src/new.py", "content": "ok"}),
    )
    turn = run_turn(app, "go", calls, headless=True)
    assert (workspace / "Makefile").read_text() == "all:\n\ttrue\n"
    assert (workspace / "src" / "new.py").read_text() == "ok"
    assert [(c["permission"], c["status"]) for c in turn.calls] == [
        ("fs:write:Makefile", "denied"),
        ("fs:write:Makefile", "denied"),
        ("fs:write:src/new.py", "ok"),
    ]


def test_paths_outside_the_workspace_are_refused_before_any_decision(
    co_dirs: Path, workspace: Path
) -> None:
    outside = workspace.parent / f"{workspace.name}-outside.txt"
    outside.write_text(SECRET)
    yolo_like = {"policy": {"rules": [{"match": "**", "effect": "allow"}]}}
    try:
        turn = turn_in(
            workspace,
            yolo_like,
            ("read_file", {"path": f"../{outside.name}"}),
            ("read_file", {"path": str(outside)}),
            ("read_file", {"path": f"link-to-secrets/../../{outside.name}"}),
        )
    finally:
        outside.unlink()  # it holds the test's secret
    assert SECRET not in turn.output
    assert [c["status"] for c in turn.calls] == ["retry"] * 3
    assert "outside the workspace" in turn.output


# -- one shell: what the policy parses is what runs ----------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "ls $'x\\' ; touch PWNED #'",  # one word to bash, two commands to dash
        "ls; touch PWNED",
        "ls && touch PWNED",
        "ls $(touch PWNED)",
        "ls `touch PWNED`",
        "ls\ntouch PWNED",
        "ls | sh -c 'touch PWNED'",
        "ls > PWNED",
    ],
)
def test_an_allow_rule_for_ls_runs_only_ls(co_dirs: Path, workspace: Path, command: str) -> None:
    allow = {"policy": {"rules": [{"match": "shell:exec:ls *", "effect": "allow"}]}}
    turn = turn_in(workspace, allow, ("run_shell_command", {"cmd": command}))
    assert not (workspace / "PWNED").exists()
    assert turn.calls[0]["status"] in ("denied", "retry")  # asked (no one to ask) or harmless


# -- literal commands only: what was decided is what runs (issue 26) --------------------------


def _plant(workspace: Path) -> None:
    """Programs shadowing real ones, and a git configuration that runs code."""
    from shell_testlib import chown_tree

    (workspace / "tools").mkdir()
    for name in ("ls", "cat", "git", "find"):
        (workspace / "tools" / name).write_text("#!/bin/sh\ntouch /workspace/PWNED-tool\n")
        (workspace / "tools" / name).chmod(0o755)
    (workspace / ".gitconfig").write_text('[core]\n\tfsmonitor = "touch /workspace/PWNED-git"\n')
    (workspace / "x").write_text("x\n")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    chown_tree(workspace)


def _marks(workspace: Path) -> list[str]:
    return sorted(p.name for p in workspace.rglob("*PWNED*"))


@pytest.mark.parametrize("family", sorted(shell_corpus.FAMILIES))
def test_read_only_rules_never_run_what_they_do_not_name(
    co_dirs: Path, workspace: Path, family: str
) -> None:
    """Every variant of each class of issue 26, in one real turn under `co ask`, with only
    read-only programs allowed: each is asked about (so, headless, not run)."""
    _plant(workspace)
    commands = shell_corpus.FAMILIES[family]
    app = make_app(
        {"shell": {"sandbox": "bubblewrap"}, "policy": {"rules": shell_corpus.RULES}},
        cwd=workspace,
    )
    calls = [("run_shell_command", {"cmd": c}) for c in commands]
    turn = run_turn(app, "go", all_at_once(*calls), headless=True)
    assert _marks(workspace) == []
    held = [c for c in turn.calls if c["status"] == "denied"]
    assert len(held) == len(commands), [c for c in turn.calls if c["status"] != "denied"]


def test_allowed_commands_run_as_co_spelled_them(co_dirs: Path, workspace: Path) -> None:
    """The read-only commands keep running unasked, however they are quoted, and the key,
    the decision and what ran are Co's one spelling of them."""
    _plant(workspace)
    app = make_app(
        {"shell": {"sandbox": "bubblewrap"}, "policy": {"rules": shell_corpus.RULES}},
        cwd=workspace,
    )
    commands = ["ls -la tools", "'ls'  \"-la\" tools", "l\\s -l''a tools", "git status"]
    turn = run_turn(
        app, "go", all_at_once(*[("run_shell_command", {"cmd": c}) for c in commands]),
        headless=True,
    )  # fmt: skip
    assert [c["status"] for c in turn.calls] == ["ok"] * 4
    keys = [c["permission"] for c in turn.calls]
    assert keys[:3] == ["shell:exec:ls -la tools"] * 3 and keys[3] == "shell:exec:git status"
    assert [c["args"]["cmd"] for c in turn.calls][:3] == ["ls -la tools"] * 3
    assert _marks(workspace) == []


def test_a_yes_runs_a_command_that_is_not_fixed_as_written(co_dirs: Path, workspace: Path) -> None:
    """Not fixed means asked, with a reason; the user's yes runs exactly what was shown."""
    from co_core.testing import Approvals

    app = make_app({"shell": {"sandbox": "bubblewrap"}}, cwd=workspace)
    desk = Approvals(True)
    command = "n=2; echo $((n * 21)) > answer.txt"
    turn = run_turn(
        app, "go", script_calls(("run_shell_command", {"cmd": command})), approvals=desk
    )
    assert turn.calls[0]["status"] == "ok" and turn.calls[0]["args"]["cmd"] == command
    assert (workspace / "answer.txt").read_text() == "42\n"
    decision = next(d for d in turn.audit("decision") if d["tool"] == "run_shell_command")
    assert decision["source"] == "shell-parser"
    assert "not fixed until it runs" in decision["reason"]


# -- Python: a yes covers exactly the code that was shown ------------------------------------


def test_a_session_yes_for_one_snippet_does_not_cover_another(
    co_dirs: Path, workspace: Path
) -> None:
    from co_core.testing import Approvals

    app = make_app({"shell": {"sandbox": "bubblewrap"}}, cwd=workspace)
    desk = Approvals(True, scope="session")
    script = script_calls(
        ("run_python", {"code": "print(1)"}),
        ("run_python", {"code": "print(1)"}),
        ("run_python", {"code": "open('PWNED', 'w').write('x')"}),
    )
    turn = run_turn(app, "go", script, approvals=desk)
    keys = [c["permission"] for c in turn.calls]
    assert keys[0] == keys[1] != keys[2]
    assert all(key.startswith("python:run:sha256=") for key in keys)
    assert "print(1)" in keys[0]  # readable: the key shows the code's beginning
    assert len(desk.asked) == 2  # the repeat was covered; the new code was asked about


def test_a_script_is_keyed_by_its_content(co_dirs: Path, workspace: Path) -> None:
    app = make_app({"shell": {"sandbox": "bubblewrap"}}, cwd=workspace)
    before = run_turn(app, "go", script_calls(("run_python", {"path": "./src//main.py"})))
    (workspace / "src" / "main.py").write_text("import os\nos.system('touch PWNED')\n")
    after = run_turn(app, "go", script_calls(("run_python", {"path": "src/main.py"})))
    first, second = before.calls[0]["permission"], after.calls[0]["permission"]
    assert first.startswith("python:run:src/main.py sha256=") and first != second


def test_co_mcp_serve_builds_the_same_keys_as_the_agent(co_dirs: Path, workspace: Path) -> None:
    import asyncio

    from co_core.agent.calls.pipeline import CallPipeline
    from co_core.agent.frontend import NoTerminal
    from co_core.mcp.serve import call, expose
    from co_core.policy.engine import PolicyEngine

    app = make_app({"shell": {"sandbox": "bubblewrap"}}, cwd=workspace)
    agent = run_turn(
        app,
        "go",
        script_calls(
            ("run_python", {"code": "print(2)"}), ("read_file", {"path": "./src/main.py"})
        ),
        headless=True,
    )
    engine = PolicyEngine.from_app(app, workspace=workspace, headless=True)
    calls = CallPipeline(engine, NoTerminal())
    deps = app.make_deps(workspace)
    deps.policy = engine.allows

    async def serve() -> None:
        exposed = await expose(app, deps, print)  # type: ignore[arg-type]
        await call(exposed, calls, "run_python", {"code": "print(2)"})
        await call(exposed, calls, "read_file", {"path": "./src/main.py"})

    try:
        asyncio.run(serve())
    finally:
        deps.close()
    served = [r.call.permission_key for r in calls.records.values()]
    assert served == [c["permission"] for c in agent.calls]


# -- notes: one note, many names --------------------------------------------------------------


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "Private").mkdir(parents=True)
    (root / "Inbox").mkdir()
    (root / "Private" / "Diary.md").write_text(
        f"---\naliases: [Dear diary]\n---\nMy {SECRET} thoughts, secretword.\n"
    )
    nfd = unicodedata.normalize("NFD", "Café.md")
    (root / "Private" / nfd).write_text(f"secretword {SECRET}\n")
    (root / "Inbox" / "todo.md").write_text("secretword is public here\n")
    return root


# The rules are under test, not the tool budget: every tool is sent, whatever else is set up.
EVERY_TOOL = {"tool_budget": 100_000}


def note_turn(vault: Path, tmp_path: Path, rules: list[dict[str, str]], *calls: Any) -> Any:
    app = make_app(
        {"obsidian": {"vault_path": str(vault)}, "policy": {"rules": rules}, **EVERY_TOOL},
        cwd=tmp_path,
    )
    return run_turn(app, "go", script_calls(*calls), headless=True)


def test_a_denied_folder_of_notes_holds_for_every_name(
    co_dirs: Path, vault: Path, tmp_path: Path
) -> None:
    deny = [{"match": "obsidian:read:Private/**", "effect": "deny"}]
    names = [
        "Private/Diary.md",
        "Private/Diary",
        "Diary",
        "[[Diary]]",
        "[[Diary|my diary]]",
        "private/diary",
        "Inbox/../Private/Diary",
        "Dear diary",
        unicodedata.normalize("NFC", "Private/Café"),
        unicodedata.normalize("NFD", "café"),
    ]
    app = make_app(
        {"obsidian": {"vault_path": str(vault)}, "policy": {"rules": deny}, **EVERY_TOOL},
        cwd=tmp_path,
    )
    calls = [("read_note", {"name": n}) for n in names]
    turn = run_turn(app, "go", all_at_once(*calls), headless=True)
    assert SECRET not in turn.output
    assert {c["status"] for c in turn.calls} == {"denied"}
    assert {c["permission"] for c in turn.calls} == {
        "obsidian:read:Private/Diary.md",
        unicodedata.normalize("NFC", "obsidian:read:Private/Café.md"),
    }


def test_searches_and_listings_leave_out_notes_the_rules_keep_from_being_read(
    co_dirs: Path, vault: Path, tmp_path: Path
) -> None:
    deny = [{"match": "obsidian:read:Private/**", "effect": "deny"}]
    turn = note_turn(
        vault,
        tmp_path,
        deny,
        ("search_notes", {"query": "secretword"}),
        ("list_notes", {}),
        ("note_links", {"name": "Inbox/todo"}),
    )
    assert SECRET not in turn.output and "Private/" not in turn.output
    assert "Inbox/todo.md" in turn.output


def test_a_write_approval_for_a_folder_does_not_cover_escaping_it(
    co_dirs: Path, vault: Path, tmp_path: Path
) -> None:
    allow = [{"match": "obsidian:write:Inbox/**", "effect": "allow"}]
    turn = note_turn(
        vault,
        tmp_path,
        allow,
        ("create_note", {"name": "Inbox/../Elsewhere/x", "content": "planted"}),
        ("create_note", {"name": "inbox/ok", "content": "fine"}),
    )
    assert not (vault / "Elsewhere").exists()
    assert [(c["permission"], c["status"]) for c in turn.calls] == [
        ("obsidian:write:Elsewhere/x.md", "denied"),
        ("obsidian:write:Inbox/ok.md", "ok"),
    ]


# -- MCP tools are decided by their own keys -------------------------------------------------


def test_mcp_rules_and_approve_patterns_apply_in_co_ask(co_dirs: Path, tmp_path: Path) -> None:
    from mcp_support import sdk_server

    notes = tmp_path / "notes.txt"
    servers = {"t": sdk_server(env={"NOTE_FILE": str(notes)})}
    deny = [{"match": "mcp:t:write_note", "effect": "deny", "reason": "no notes from MCP"}]
    app = make_app({"mcp_servers": servers, "policy": {"rules": deny}}, cwd=tmp_path)
    turn = run_turn(app, "go", script_calls(("t_write_note", {"text": "hi"})), headless=True)
    assert not notes.exists()
    (decision,) = turn.audit("decision")
    assert (decision["permission"], decision["effect"], decision["reason"]) == (
        "mcp:t:write_note",
        "deny",
        "no notes from MCP",
    )
    allow = [{"match": "mcp:t:*", "effect": "allow"}]
    app = make_app({"mcp_servers": servers, "policy": {"rules": allow}}, cwd=tmp_path)
    run_turn(app, "go", script_calls(("t_write_note", {"text": "hi"})), headless=True)
    assert notes.read_text() == "hi\n"


# -- secrets that used to slip through -----------------------------------------------------


LEAKS = {
    "pem cut short": "AAAAB3NzaC1yc2EAAAADAQABAAABAQDx\nq7vR9tY3wE6uI0oPaZx81kQ2mN4pLqq\n-----END RSA PRIVATE KEY-----",
    "netrc": "machine api.example.com login bob password hunter2-but-longer",
    "webhook": "https://hooks.slack.com/services/T0123ABC/B0456DEF/Xy7zR4nd0mS3cr3t",
    "mysql": "mysql -u root -pS3cr3tPw0rd shop",
}


@pytest.mark.parametrize("leak", sorted(LEAKS))
def test_secrets_in_tool_errors_reach_neither_audit_nor_traces(
    co_dirs: Path, workspace: Path, leak: str
) -> None:
    from helpers import span_rows

    text = LEAKS[leak]
    app = make_app({"shell": {"sandbox": "bubblewrap"}}, cwd=workspace)
    script = script_calls(("run_shell_command", {"cmd": f"echo '{text}'; exit 3"}), answer="ok")
    turn = run_turn(app, "go", script, approvals={"run_shell_command": True})
    assert [c["status"] for c in turn.calls] == ["retry"]
    db = co_dirs.parent / "co-data" / "traces.db"
    stored = json.dumps(turn.audit()) + json.dumps([r["attributes"] for r in span_rows(db)])
    secret = text.splitlines()[0] if leak == "pem cut short" else text.split()[-1]
    if leak == "mysql":
        secret = "S3cr3tPw0rd"
    assert secret not in stored, stored[
        max(0, stored.find(secret) - 300) : stored.find(secret) + 100
    ]
    assert "[REDACTED]" in stored


# -- every tool: a target in the arguments means a resolver -------------------------------


TARGET_ARGUMENTS = {"path", "name", "channel", "to"}  # arguments that name what is touched


def registered() -> Iterator[Any]:
    app = make_app({})
    yield from app.host.tools()  # type: ignore[attr-defined]


def test_every_tool_that_names_a_target_resolves_it() -> None:
    import string

    missing = []
    for spec in registered():
        fields = {f for _, f, _, _ in string.Formatter().parse(spec.permission) if f}
        if fields & TARGET_ARGUMENTS and spec.resolve is None:
            missing.append(f"{spec.plugin}:{spec.name} ({spec.permission})")
    assert missing == []


def test_hostile_spellings_give_one_key_and_the_tool_touches_that_object(
    co_dirs: Path, workspace: Path, vault: Path
) -> None:
    app = make_app({"obsidian": {"vault_path": str(vault)}}, cwd=workspace)
    deps = app.make_deps(workspace)
    specs = {spec.name: spec for spec in app.host.tools()}  # type: ignore[attr-defined]
    families = {
        "read_file": [{"path": p} for p in spellings(workspace)],
        "list_files": [
            {"path": p} for p in ["secrets", "./secrets/", "link-to-secrets", "src/../secrets"]
        ],
        "write_file": [
            {"path": p, "content": ""}
            for p in [
                "src/a.py",
                "./src//a.py",
                "/workspace/src/a.py",
                "link-to-secrets/../src/a.py",
            ]
        ],
        "edit_file": [
            {"path": p, "search": "a", "replace": "b"}
            for p in ["src/main.py", "src/link-to-root/src/main.py"]
        ],
        "run_python": [
            {"path": p} for p in ["src/main.py", "./src/main.py", "src/link-to-root/src/main.py"]
        ],
        "read_note": [
            {"name": n}
            for n in ["Private/Diary", "Diary", "[[Diary]]", "private/DIARY.md", "Dear diary"]
        ],
        "note_links": [{"name": n} for n in ["Inbox/todo", "todo", "[[todo]]"]],
        "append_to_note": [
            {"name": n, "content": "x"}
            for n in ["Inbox/todo.md", "inbox/todo", "Private/../Inbox/todo"]
        ],
        "create_note": [
            {"name": n, "content": "x"}
            for n in ["Inbox/new", "inbox/new.md", "Private/../Inbox/new"]
        ],
    }
    try:
        for tool, variants in families.items():
            calls = [specs[tool].make_call(args, deps) for args in variants]
            assert len({c.all_keys for c in calls}) == 1, (tool, [c.all_keys for c in calls])
            touched = {_target(deps, tool, c.args) for c in calls}
            assert len(touched) == 1, (tool, touched)
            key = calls[0].permission_key.split(":", 2)[2]
            assert _same_object(key, next(iter(touched)), workspace, vault), (tool, key, touched)
    finally:
        deps.close()


def _target(deps: Any, tool: str, args: Any) -> str:
    """The real object the tool would open with these (resolved) arguments."""
    if "path" in args:
        return os.path.realpath(deps.workspace / args["path"])
    return os.path.realpath(Path(deps.settings.section("obsidian").vault_path) / args["name"])


def _same_object(key: str, real: str, workspace: Path, vault: Path) -> bool:
    key = key.split(" sha256=")[0]  # python:run:<path> sha256=...
    for root in (workspace, vault):
        if (
            os.path.realpath(root / key) == unicodedata.normalize("NFC", real)
            or os.path.realpath(root / key) == real
        ):
            return True
    return False


def test_co_mcp_serve_holds_the_same_rules_for_every_spelling(
    co_dirs: Path, workspace: Path
) -> None:
    """Another assistant calling Co's tools over MCP gets the same resolved keys."""
    import sys

    import anyio
    from mcp import Client, StdioServerParameters

    from co_core.testing import write_settings

    write_settings(
        {"policy": {"rules": [{"match": "fs:read:secrets/**", "effect": "deny"}]}}, co_dirs
    )
    env = {
        "CO_LOAD_PLUGINS": "shell",
        **{k: os.environ[k] for k in ("CO_CONFIG_DIR", "CO_DATA_DIR", "CO_CACHE_DIR", "PATH")},
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "co_core", "mcp", "serve"], env=env, cwd=str(workspace)
    )

    async def main() -> list[Any]:
        async with Client(params) as client:
            return [
                await client.call_tool("read_file", {"path": path}) for path in spellings(workspace)
            ]

    results = anyio.run(main)
    texts = ["".join(getattr(p, "text", "") for p in r.content) for r in results]
    assert all(r.is_error for r in results)
    assert all(t.startswith("Denied by policy: ") and SECRET not in t for t in texts)
