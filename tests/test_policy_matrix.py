"""The precedence matrix: every source against the others, globbing, flags, headless mode."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import call, engine_for

from co_core.policy import grants

W = "write_file"
ALLOW_SRC = {"match": "fs:write:src/**", "effect": "allow"}
DENY_ALL_WRITES = {"match": "fs:write:**", "effect": "deny"}

# (id, set-up, tool, args, expected effect, expected source)
MATRIX = [
    ("read defaults to allow", {}, "read_file", {"path": "a.txt"}, "allow", "default"),
    ("write defaults to ask", {}, W, {"path": "a.txt"}, "ask", "default"),
    ("send defaults to ask", {}, "post_message", {"channel": "#general"}, "ask", "default"),
    ("exec defaults to ask", {}, "run_shell", {"cmd": "ls"}, "ask", "default"),
    ("no risk defaults to ask", {}, "mystery", {"thing": "x"}, "ask", "default"),
    ("own plugin allows", {"opinions": {W: "allow"}}, W, {"path": "a"}, "allow", "plugin"),
    (
        "another plugin cannot allow",
        {"other_opinions": {W: "allow"}},
        W,
        {"path": "a"},
        "ask",
        "default",
    ),
    (
        "another plugin can deny",
        {"other_opinions": {"read_file": "deny"}},
        "read_file",
        {"path": "a"},
        "deny",
        "plugin",
    ),
    (
        "plugins disagree: most restrictive",
        {"opinions": {W: "allow"}, "other_opinions": {W: "ask"}},
        W,
        {"path": "a"},
        "ask",
        "plugin",
    ),
    ("user glob allows", {"user_rules": [ALLOW_SRC]}, W, {"path": "src/a/b.py"}, "allow", "user"),
    ("user glob misses", {"user_rules": [ALLOW_SRC]}, W, {"path": "docs/a.md"}, "ask", "default"),
    (
        "single star stops at /",
        {"user_rules": [{"match": "fs:write:src/*", "effect": "allow"}]},
        W,
        {"path": "src/a/b.py"},
        "ask",
        "default",
    ),
    (
        "user beats plugin deny",
        {"other_opinions": {W: "deny"}, "user_rules": [ALLOW_SRC]},
        W,
        {"path": "src/a.py"},
        "allow",
        "user",
    ),
    (
        "more specific pattern wins in a level",
        {"user_rules": [DENY_ALL_WRITES, ALLOW_SRC]},
        W,
        {"path": "src/a.py"},
        "allow",
        "user",
    ),
    (
        "same pattern: deny beats allow",
        {"user_rules": [ALLOW_SRC, {"match": "fs:write:src/**", "effect": "deny"}]},
        W,
        {"path": "src/a.py"},
        "deny",
        "user",
    ),
    (
        "user deny on a read tool",
        {"user_rules": [{"match": "fs:read:~/.ssh/**", "effect": "deny"}]},
        "read_file",
        {"path": str(Path.home() / ".ssh/id_rsa")},
        "deny",
        "user",
    ),
    (
        "project beats user",
        {
            "user_rules": [ALLOW_SRC],
            "project_rules": [{"match": "fs:write:src/vendor/**", "effect": "deny"}],
        },
        W,
        {"path": "src/vendor/x.py"},
        "deny",
        "project",
    ),
    (
        "project allow beats user deny",
        {"user_rules": [DENY_ALL_WRITES], "project_rules": [ALLOW_SRC]},
        W,
        {"path": "src/a.py"},
        "allow",
        "project",
    ),
    (
        "untrusted project is ignored",
        {"user_rules": [ALLOW_SRC], "project_rules": [DENY_ALL_WRITES], "trusted": False},
        W,
        {"path": "src/a.py"},
        "allow",
        "user",
    ),
    (
        "grant never beats a project deny",
        {"project_rules": [DENY_ALL_WRITES], "grant": "fs:write:docs/x.md"},
        W,
        {"path": "docs/x.md"},
        "deny",
        "project",
    ),
    (
        "grant beats a project ask",
        {"project_rules": [{"match": "fs:write:**", "effect": "ask"}], "grant": "fs:write:a"},
        W,
        {"path": "a"},
        "allow",
        "grant",
    ),
    (
        "session beats grant",
        {"grant": "fs:write:docs/x.md", "session_deny": "fs:write:docs/x.md"},
        W,
        {"path": "docs/x.md"},
        "deny",
        "session",
    ),
    (
        "--approve beats session",
        {"session_deny": "fs:write:docs/x.md", "approve": ["fs:write:**"]},
        W,
        {"path": "docs/x.md"},
        "allow",
        "flag",
    ),
    (
        "--yolo beats a user deny",
        {"user_rules": [DENY_ALL_WRITES], "yolo": True},
        W,
        {"path": "a"},
        "allow",
        "flag",
    ),
    ("--yolo allows shell", {"yolo": True}, "run_shell", {"cmd": "rm -rf /"}, "allow", "flag"),
    ("headless turns ask into deny", {"headless": True}, W, {"path": "a.txt"}, "deny", "headless"),
    (
        "headless keeps allow",
        {"headless": True, "user_rules": [ALLOW_SRC]},
        W,
        {"path": "src/a"},
        "allow",
        "user",
    ),
    ("headless read", {"headless": True}, "read_file", {"path": "a"}, "allow", "default"),
    (
        "shell rule allows its command",
        {"user_rules": [{"match": "shell:exec:git status *", "effect": "allow"}]},
        "run_shell",
        {"cmd": "git status --short src/"},
        "allow",
        "user",
    ),
    (
        "trailing star matches the bare command",
        {"user_rules": [{"match": "shell:exec:ls *", "effect": "allow"}]},
        "run_shell",
        {"cmd": "ls"},
        "allow",
        "user",
    ),
    (
        "a chained command needs every part",
        {"user_rules": [{"match": "shell:exec:ls *", "effect": "allow"}]},
        "run_shell",
        {"cmd": "ls; rm -rf ~"},
        "ask",
        "default",
    ),
    (
        "ask_once from settings",
        {"user_rules": [{"match": "slack:post:*", "effect": "ask_once"}]},
        "post_message",
        {"channel": "#general"},
        "ask_once",
        "user",
    ),
]


@pytest.mark.parametrize(
    "setup, tool, args, effect, source", [row[1:] for row in MATRIX], ids=[r[0] for r in MATRIX]
)
def test_precedence_matrix(
    co_dirs: Path, tmp_path: Path, setup: dict, tool: str, args: dict, effect: str, source: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    setup = dict(setup)
    grant = setup.pop("grant", None)
    session_deny = setup.pop("session_deny", None)
    if grant:
        grants.add_grant(project.resolve(), grant, "allow", tool)
    engine = engine_for(project, **setup)
    if session_deny:
        engine.grant_session(session_deny, effect="deny")
    decision = engine.decide(call(engine, tool, **args))
    assert (decision.effect, decision.source) == (effect, source), decision.reason


def test_headless_denial_names_the_flag_that_would_allow_it(co_dirs: Path, tmp_path: Path) -> None:
    engine = engine_for(tmp_path, headless=True)
    decision = engine.decide(call(engine, "run_shell", cmd="make test && rm -rf build"))
    assert decision.effect == "deny"
    assert decision.asked_by == "default"
    assert "--approve 'shell:exec:make test'" in decision.reason
    assert "--approve 'shell:exec:rm -rf build'" in decision.reason
    assert "--yolo" in decision.reason
    # following the advice works
    advised = engine_for(
        tmp_path, headless=True, approve=["shell:exec:make test", "shell:exec:rm -rf build"]
    )
    again = advised.decide(call(advised, "run_shell", cmd="make test && rm -rf build"))
    assert (again.effect, again.source) == ("allow", "flag")


def test_untrusted_project_policy_is_reported(co_dirs: Path, tmp_path: Path) -> None:
    engine = engine_for(tmp_path, project_rules=[{"match": "**", "effect": "allow"}], trusted=False)
    assert any("not trusted" in n and "co trust" in n for n in engine.notices)
    assert engine.decide(call(engine, "write_file", path="a")).effect == "ask"


def test_bad_rule_in_settings_is_one_clear_error(co_dirs: Path, tmp_path: Path) -> None:
    from co_core.kernel.errors import CoError

    with pytest.raises(CoError, match="policy.rules.*ask_once"):
        engine_for(tmp_path, user_rules=[{"match": "fs:**", "effect": "sometimes"}])
