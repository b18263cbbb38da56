"""Answers to prompts: once, for the session, for the project; ask_once; plugin upgrades."""

from __future__ import annotations

import json
from pathlib import Path

from policy_support import TOOLS, call, engine_for

from co_core.policy import grants


def test_yes_once_is_not_remembered(co_dirs: Path, tmp_path: Path) -> None:
    engine = engine_for(tmp_path)
    first = engine.decide(call(engine, "write_file", path="notes.md"))
    engine.record_answer(first, True, scope="once")
    assert engine.decide(call(engine, "write_file", path="notes.md")).effect == "ask"


def test_session_grant_lasts_for_the_session_only(co_dirs: Path, tmp_path: Path) -> None:
    engine = engine_for(tmp_path)
    first = engine.decide(call(engine, "post_message", channel="#general"))
    engine.record_answer(first, True, scope="session")
    again = engine.decide(call(engine, "post_message", channel="#general"))
    assert (again.effect, again.source) == ("allow", "session")
    other = engine.decide(call(engine, "post_message", channel="#random"))
    assert other.effect == "ask"
    assert (
        engine_for(tmp_path).decide(call(engine, "post_message", channel="#general")).effect
        == "ask"
    )


def test_project_grant_persists_for_this_project_only(co_dirs: Path, tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "p", tmp_path / "q"
    project.mkdir(), elsewhere.mkdir()
    engine = engine_for(project)
    first = engine.decide(call(engine, "run_shell", cmd="make test && make lint"))
    assert first.pending == ("shell:exec:make test", "shell:exec:make lint")
    engine.record_answer(first, True, scope="project")
    stored = json.loads(grants.grants_file().read_text())
    assert oct(grants.grants_file().stat().st_mode & 0o777) == "0o600"
    assert [g["key"] for g in stored["projects"][str(project.resolve())]] == list(first.pending)

    later = engine_for(project)  # a new session in the same project
    again = later.decide(call(later, "run_shell", cmd="make lint; make test"))
    assert (again.effect, again.source) == ("allow", "grant")
    sneaky = later.decide(call(later, "run_shell", cmd="make test; rm -rf ~"))
    assert sneaky.effect == "ask" and sneaky.pending == ("shell:exec:rm -rf ~",)
    other = engine_for(elsewhere)
    assert other.decide(call(other, "run_shell", cmd="make test")).effect == "ask"


def test_ask_once_remembers_a_yes_for_the_project(co_dirs: Path, tmp_path: Path) -> None:
    rules = [{"match": "slack:post:*", "effect": "ask_once"}]
    engine = engine_for(tmp_path, user_rules=rules)
    first = engine.decide(call(engine, "post_message", channel="#team"))
    assert first.effect == "ask_once"
    engine.record_answer(first, True)  # "yes once" is enough for ask_once
    later = engine_for(tmp_path, user_rules=rules)
    again = later.decide(call(later, "post_message", channel="#team"))
    assert (again.effect, again.source) == ("allow", "grant")
    assert later.decide(call(later, "post_message", channel="#all")).effect == "ask_once"


def test_ask_once_remembers_a_no_for_the_session(co_dirs: Path, tmp_path: Path) -> None:
    rules = [{"match": "slack:post:*", "effect": "ask_once"}]
    engine = engine_for(tmp_path, user_rules=rules)
    first = engine.decide(call(engine, "post_message", channel="#team"))
    engine.record_answer(first, False)
    again = engine.decide(call(engine, "post_message", channel="#team"))
    assert (again.effect, again.source) == ("deny", "session")
    later = engine_for(tmp_path, user_rules=rules)
    assert later.decide(call(later, "post_message", channel="#team")).effect == "ask_once"


def test_upgrade_that_widens_a_plugin_says_so_once_and_drops_its_grants(
    co_dirs: Path, tmp_path: Path
) -> None:
    engine = engine_for(tmp_path)
    assert engine.check_upgrades() == []  # first sight of a plugin: recorded silently
    for tool, path in [("write_file", "a.md"), ("read_file", "b.md")]:
        engine.record_answer(engine.decide(call(engine, tool, path=path)), True, scope="project")

    upgraded = dict(TOOLS)
    upgraded["write_file"] = ("exec", "fs:write:{path}")  # risk raised
    upgraded["delete_file"] = ("write", "fs:delete:{path}")  # new tool
    after = engine_for(tmp_path, tools=upgraded)
    notices = after.check_upgrades()
    assert any("raised the risk of tool 'write_file' from write to exec" in n for n in notices)
    assert any("added tool 'delete_file'" in n for n in notices)
    assert after.decide(call(after, "write_file", path="a.md")).effect == "ask"
    kept = after.decide(call(after, "read_file", path="b.md"))
    assert kept.source == "grant"  # grants of unchanged tools stay
    assert engine_for(tmp_path, tools=upgraded).check_upgrades() == []  # said once


def test_explain_finds_the_tool_behind_a_key(co_dirs: Path, tmp_path: Path) -> None:
    engine = engine_for(tmp_path, opinions={"post_message": "deny"})
    decision, rows = engine.explain(engine.call_for_key("slack:post:#general"))
    assert (decision.tool, decision.plugin) == ("post_message", "fake")
    assert (decision.effect, decision.source) == ("deny", "plugin")
    assert [(r.level, r.effect) for r in rows[0][1]] == [("default", "ask"), ("plugin", "deny")]


def test_unknown_tool_is_asked(co_dirs: Path, tmp_path: Path) -> None:
    engine = engine_for(tmp_path, user_rules=[{"match": "fs:**", "effect": "allow"}])
    decision = engine.decide(engine.make_call("no_such_tool", {"path": "x"}))
    assert decision.effect == "ask" and decision.key == "unknown:no_such_tool"
