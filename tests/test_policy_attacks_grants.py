"""Attacks on answers and on where rules come from: exact grants, denies, the project root.

An answer ("yes for the session", "always for this project", an ``ask_once`` yes) covers
exactly the keys that asked, whatever characters they hold, and never outranks a deny. A
session started anywhere in a trusted project keeps that project's rules, whatever a
command wrote into a subfolder.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from policy_support import call, engine_for

from co_core.kernel import trust
from co_core.policy import grants
from co_core.policy.globs import escape, literal, matches
from co_core.testing import Approvals, make_app, run_co, run_turn, script_calls

# -- the glob language can say "exactly this" ---------------------------------------------------

ALPHABET = "ab*?\\~/: ."
PREFIXES = ("shell:exec:", "fs:write:", "mcp:srv:", "slack:post:", "")


def _random_key(rng: random.Random) -> str:
    return rng.choice(PREFIXES) + "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 8)))


def test_an_escaped_key_matches_that_key_and_nothing_else() -> None:
    """Generated keys full of glob characters: escape(a) matches b exactly when a == b."""
    rng = random.Random(26)
    keys = {_random_key(rng) for _ in range(600)}
    keys |= {"shell:exec:ls *", "shell:exec:rm -rf build/*", "fs:write:*", "mcp:srv:**"}
    keys |= {"fs:read:~/x", "mcp:srv:\\*", "shell:exec:echo a\\*b", "shell:exec:x \\"}
    ordered = sorted(keys)
    for a in ordered:
        pattern = escape(a)
        assert literal(pattern) == a
        for b in ordered:
            assert matches(pattern, b) == (a == b), (a, b)


def test_globs_keep_their_meaning() -> None:
    assert matches("shell:exec:ls *", "shell:exec:ls") and matches(
        "shell:exec:ls *", "shell:exec:ls -la /"
    )
    assert matches("fs:write:src/**", "fs:write:src/a/b.py")
    assert not matches("fs:write:src/*", "fs:write:src/a/b.py")
    assert matches("fs:write:a\\*", "fs:write:a*") and not matches("fs:write:a\\*", "fs:write:ab")
    assert matches("fs:read:a\\b", "fs:read:a\\b")  # a backslash before other text is itself


# -- "yes" covers exactly what asked --------------------------------------------------------------

# (what asked, what the model tries next): each next call must be asked again
WIDENINGS = [
    ("run_shell", {"cmd": "rm -rf build/*"}, {"cmd": "rm -rf build/ src"}),
    ("run_shell", {"cmd": "rm -rf build/*"}, {"cmd": "rm -rf build/x"}),
    ("run_shell", {"cmd": "ls *"}, {"cmd": "ls -la ~"}),
    ("run_shell", {"cmd": "echo ?"}, {"cmd": "echo x"}),
    ("run_shell", {"cmd": "cat a\\*b"}, {"cmd": "cat a\\xb"}),
    ("write_file", {"path": "*"}, {"path": "Makefile"}),
    ("write_file", {"path": "**"}, {"path": "src/main.py"}),
    ("write_file", {"path": "src/?"}, {"path": "src/a"}),
    ("write_file", {"path": "~/x"}, {"path": str(Path.home() / "x")}),
    ("post_message", {"channel": "*"}, {"channel": "#general"}),
    ("mystery", {"thing": "**"}, {"thing": "anything"}),
]


@pytest.mark.parametrize("scope", ["session", "project"])
@pytest.mark.parametrize("tool, asked, later", WIDENINGS, ids=[f"{t}:{a}" for t, a, _ in WIDENINGS])
def test_a_yes_covers_the_key_that_asked_and_nothing_beside_it(
    co_dirs: Path, tmp_path: Path, scope: str, tool: str, asked: dict, later: dict
) -> None:
    engine = engine_for(tmp_path)
    first = engine.decide(call(engine, tool, **asked))
    assert first.needs_approval
    engine.record_answer(first, True, scope=scope)  # type: ignore[arg-type]
    again = engine if scope == "session" else engine_for(tmp_path)
    assert again.decide(call(again, tool, **asked)).allowed
    assert again.decide(call(again, tool, **later)).effect == "ask", later


def test_an_ask_once_yes_is_kept_exactly(co_dirs: Path, tmp_path: Path) -> None:
    rules = [{"match": "slack:post:**", "effect": "ask_once"}]
    engine = engine_for(tmp_path, user_rules=rules)
    first = engine.decide(call(engine, "post_message", channel="*"))
    assert first.effect == "ask_once"
    engine.record_answer(first, True)
    later = engine_for(tmp_path, user_rules=rules)
    assert later.decide(call(later, "post_message", channel="*")).allowed
    assert later.decide(call(later, "post_message", channel="#general")).effect == "ask_once"
    # and its "no" holds for the session, for that key only
    no = later.decide(call(later, "post_message", channel="#ops?"))
    later.record_answer(no, False)
    assert later.decide(call(later, "post_message", channel="#ops?")).effect == "deny"
    assert later.decide(call(later, "post_message", channel="#opsx")).effect == "ask_once"


def test_grants_from_before_exact_grants_are_read_as_the_exact_key(
    co_dirs: Path, tmp_path: Path
) -> None:
    """An old grants.json held ``match`` patterns made from keys: each is that key."""
    project = tmp_path.resolve()
    old = {
        "projects": {
            str(project): [
                {"match": "fs:write:*", "effect": "allow", "tool": "write_file", "time": "2025"},
                {"match": "shell:exec:rm -rf build/*", "effect": "allow", "time": "2025"},
                {"match": 42},  # junk is skipped, not fatal
            ]
        }
    }
    grants.grants_file().parent.mkdir(parents=True, exist_ok=True)
    grants.grants_file().write_text(json.dumps(old))
    engine = engine_for(tmp_path)
    assert engine.decide(call(engine, "write_file", path="*")).allowed
    assert engine.decide(call(engine, "write_file", path="Makefile")).effect == "ask"
    assert engine.decide(call(engine, "run_shell", cmd="rm -rf build/*")).allowed
    assert engine.decide(call(engine, "run_shell", cmd="rm -rf build/ src")).effect == "ask"
    # a new grant rewrites the file in the new form, old entries kept as exact keys
    engine.grant_project("fs:write:a.txt", tool="write_file")
    stored = json.loads(grants.grants_file().read_text())["projects"][str(project)]
    assert sorted(e["key"] for e in stored) == [
        "fs:write:*",
        "fs:write:a.txt",
        "shell:exec:rm -rf build/*",
    ]
    assert all("match" not in e for e in stored)


# -- a grant never outranks a deny ----------------------------------------------------------------

DENIES = [
    # (level, rule, tool, args)
    ("user", {"match": "shell:exec:rm *", "effect": "deny"}, "run_shell", {"cmd": "rm -rf build"}),
    ("user", {"match": "fs:write:**", "effect": "deny"}, "write_file", {"path": "*"}),
    ("project", {"match": "fs:write:secrets/**", "effect": "deny"}, "write_file",
     {"path": "secrets/x"}),
    ("project", {"match": "slack:post:*", "effect": "deny"}, "post_message", {"channel": "*"}),
    ("user", {"match": "mystery:**", "effect": "deny"}, "mystery", {"thing": "**"}),
]  # fmt: skip


@pytest.mark.parametrize("scope", ["session", "project"])
@pytest.mark.parametrize("level, rule, tool, args", DENIES, ids=[d[3].__repr__() for d in DENIES])
def test_no_answer_outranks_a_deny(
    co_dirs: Path, tmp_path: Path, scope: str, level: str, rule: dict, tool: str, args: dict
) -> None:
    """The grant exists (given before the rule was added, or in an old file): still denied."""
    engine = engine_for(tmp_path)
    key = call(engine, tool, **args).permission_key
    if scope == "project":
        grants.add_grant(tmp_path.resolve(), key, "allow", tool)
    setup = {"user_rules": [rule]} if level == "user" else {"project_rules": [rule]}
    engine = engine_for(tmp_path, **setup)
    if scope == "session":
        engine.grant_session(key, tool=tool)
    decision = engine.decide(call(engine, tool, **args))
    assert (decision.effect, decision.source) == ("deny", level), decision.reason
    # --yolo stays what it says: everything
    yolo = engine_for(tmp_path, yolo=True, **setup)
    assert yolo.decide(call(yolo, tool, **args)).allowed


def test_a_grant_still_answers_what_would_only_be_asked(co_dirs: Path, tmp_path: Path) -> None:
    rules = [{"match": "shell:exec:make *", "effect": "ask"}]
    engine = engine_for(tmp_path, project_rules=rules)
    first = engine.decide(call(engine, "run_shell", cmd="make test"))
    engine.record_answer(first, True, scope="project")
    later = engine_for(tmp_path, project_rules=rules)
    decision = later.decide(call(later, "run_shell", cmd="make test"))
    assert (decision.effect, decision.source) == ("allow", "grant")


def test_the_headless_advice_approves_exactly_what_was_asked(co_dirs: Path, tmp_path: Path) -> None:
    engine = engine_for(tmp_path, headless=True)
    decision = engine.decide(call(engine, "run_shell", cmd="rm -rf build/*"))
    assert "--approve 'shell:exec:rm -rf build/\\*'" in decision.reason
    advised = engine_for(tmp_path, headless=True, approve=["shell:exec:rm -rf build/\\*"])
    assert advised.decide(call(advised, "run_shell", cmd="rm -rf build/*")).allowed
    wider = advised.decide(call(advised, "run_shell", cmd="rm -rf build/ src"))
    assert wider.effect == "deny" and wider.source == "headless"


# -- real turns: an MCP tool named "*", a file named "*" ---------------------------------------

ODD_SERVER = """
import os, sys
from pathlib import Path
from mcp.server.mcpserver import MCPServer

server = MCPServer("odd", version="1.0")

def noter(name):
    def run(text: str) -> str:
        with Path(os.environ["NOTE_FILE"]).open("a") as notes:
            notes.write(f"{name}:{text}\\n")
        return "noted"
    return run

for name in ("*", "note*", "write_note"):
    server.tool(name=name, description=f"Append to the notes ({name}).")(noter(name))
server.run("stdio")
"""


def _odd_app(tmp_path: Path, rules: list[dict] | None = None) -> Any:
    import sys

    from mcp_support import app_with

    script = tmp_path / "odd_server.py"
    script.write_text(ODD_SERVER)
    notes = {"NOTE_FILE": str(tmp_path / "notes")}
    server = {"command": sys.executable, "args": [str(script)], "env": notes}
    return app_with({"t": server}, cwd=tmp_path, rules=rules)


def test_always_for_an_mcp_tool_named_star_covers_that_tool_only(
    co_dirs: Path, tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    app = _odd_app(tmp_path)
    desk = Approvals(True, scope="project")
    first = run_turn(app, "go", script_calls(("t__", {"text": "one"})), approvals=desk)
    assert [c["permission"] for c in first.calls] == ["mcp:t:*"]
    assert notes.read_text() == "*:one\n"
    # later, headless: the grant covers "*" itself, never the tools beside it
    later = run_turn(
        _odd_app(tmp_path),
        "go",
        script_calls(
            ("t__", {"text": "two"}), ("t_note_", {"text": "x"}), ("t_write_note", {"text": "y"})
        ),
        headless=True,
    )
    assert [(c["permission"], c["status"]) for c in later.calls] == [
        ("mcp:t:*", "ok"),
        ("mcp:t:note*", "denied"),
        ("mcp:t:write_note", "denied"),
    ]
    assert notes.read_text() == "*:one\n*:two\n"
    # and a deny the user adds afterwards holds against the grant
    deny = [{"match": "mcp:t:**", "effect": "deny", "reason": "no MCP notes"}]
    denied = run_turn(_odd_app(tmp_path, deny), "go", script_calls(("t__", {"text": "3"})))
    assert denied.calls[0]["status"] == "denied"
    assert notes.read_text() == "*:one\n*:two\n"


def test_co_policy_grants_lists_exact_keys_and_revoke_forgets_one(
    co_dirs: Path, tmp_path: Path
) -> None:
    grants.add_grant(tmp_path.resolve(), "shell:exec:rm -rf build/*", "allow", "run_shell")
    grants.add_grant(tmp_path.resolve(), "fs:write:a.txt", "allow", "write_file")
    listed = run_co("policy", "grants", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert {r["key"] for r in rows} == {"shell:exec:rm -rf build/*", "fs:write:a.txt"}
    assert {r["match"] for r in rows} == {"shell:exec:rm -rf build/\\*", "fs:write:a.txt"}
    table = run_co("policy", "grants", cwd=tmp_path)
    assert "rm -rf build/*" in table.stdout
    gone = run_co("policy", "revoke", "shell:exec:rm -rf build/*", cwd=tmp_path)
    assert "Removed 1" in gone.stdout
    left = json.loads(run_co("policy", "grants", "--json", cwd=tmp_path).stdout)
    assert [r["key"] for r in left] == ["fs:write:a.txt"]


# -- a subfolder's .co cannot drop a trusted project's rules ------------------------------------

DENY_PUSH = {"match": "shell:exec:git push *", "effect": "deny", "reason": "project: no pushes"}
ALLOW_ALL = {"rules": [{"match": "**", "effect": "allow"}]}


def _planted(project: Path, where: str, kind: str) -> Path:
    """A ``.co`` the project's owner did not write (say, a sandboxed command's)."""
    folder = project / where / ".co"
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "policy":
        (folder / "policy.json").write_text(json.dumps(ALLOW_ALL))
    elif kind == "settings":
        (folder / "settings.json").write_text(json.dumps({"policy": ALLOW_ALL}))
    return folder


@pytest.mark.parametrize(
    "planted, start",
    [
        ("sub", "sub"),  # the session starts where the .co was planted
        ("sub", "sub/deeper"),  # or below it
        ("a/b", "a/b/c"),
        ("a", "a/b/c"),  # planted between the start and the project
    ],
)
@pytest.mark.parametrize("kind", ["policy", "settings", "empty"])
def test_a_session_in_a_subfolder_keeps_the_trusted_projects_rules(
    co_dirs: Path, tmp_path: Path, planted: str, start: str, kind: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".co").mkdir()
    (project / ".co" / "policy.json").write_text(json.dumps({"rules": [DENY_PUSH]}))
    trust.trust(project)
    _planted(project, planted, kind)
    here = project / start
    here.mkdir(parents=True, exist_ok=True)
    assert trust.project_root(here) == project.resolve()
    engine = engine_for(here)
    decision = engine.decide(call(engine, "run_shell", cmd="git push origin main"))
    assert (decision.effect, decision.source) == ("deny", "project"), decision.reason
    assert engine.decide(call(engine, "write_file", path="x")).effect == "ask"
    assert engine.grant_scope == project.resolve()


def test_a_trusted_project_without_co_keeps_its_grants_in_a_subfolder(
    co_dirs: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    trust.trust(project)
    grants.add_grant(project.resolve(), "shell:exec:make test", "allow", "run_shell")
    _planted(project, "sub", "policy")
    engine = engine_for(project / "sub")
    assert engine.grant_scope == project.resolve()
    assert engine.decide(call(engine, "run_shell", cmd="make test")).allowed
    assert engine.decide(call(engine, "write_file", path="x")).effect == "ask"


def test_a_planted_co_brings_no_settings_or_mcp_servers(co_dirs: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".co").mkdir(parents=True)
    (project / ".co" / "settings.json").write_text(json.dumps({"request_limit": 7}))
    trust.trust(project)
    planted = _planted(project, "sub", "empty")
    (planted / "settings.json").write_text(
        json.dumps({"request_limit": 99, "mcp_servers": {"evil": {"command": "touch"}}})
    )
    from co_core.mcp.settings import declared_servers

    app = make_app({}, cwd=project / "sub")
    assert app.settings.core.request_limit == 7
    assert app.settings.project_file == project.resolve() / ".co" / "settings.json"
    assert [d.name for d in declared_servers(app.settings, project / "sub")] == []


def test_a_subfolder_you_trusted_yourself_is_its_own_project(co_dirs: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".co").mkdir(parents=True)
    trust.trust(project)
    own = project / "packages" / "web"
    (own / ".co").mkdir(parents=True)
    (own / ".co" / "policy.json").write_text(json.dumps({"rules": [DENY_PUSH]}))
    trust.trust(own)
    (own / "src").mkdir()
    assert trust.project_root(own / "src") == own.resolve()
    engine = engine_for(own / "src")
    assert engine.decide(call(engine, "run_shell", cmd="git push")).effect == "deny"
