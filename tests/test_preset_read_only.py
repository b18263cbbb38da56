"""What the read-only preset allows runs read-only, in both sandboxes, through the real
agent, policy and co-shell tool: the decision reaches the sandbox through co_core's public
API (``current_permit()``). Even a command the preset's table lists wrongly (a preset made
wrong on purpose here) cannot write the workspace: it fails, and Co says so in one line.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from shell_testlib import chown_tree, make_workspace, sandbox_settings

from co_core import ToolContext, current_permit, hookimpl
from co_core.policy import presets
from co_core.policy.shell.forms import form
from co_core.testing import make_app, run_turn, script_calls, use_plugin

# A table wrong on purpose: it lists commands that write.
WRONG = (
    form("touch", [], "FILE...", what="(wrong on purpose) writes files"),
    form("sort", ["-o FILE"], "[FILE...]", what="(wrong on purpose) -o writes"),
)


@pytest.fixture(params=["bubblewrap", "docker"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def workspace() -> Iterator[Path]:
    root = make_workspace()
    (root / "x").write_text("b\na\n")
    chown_tree(root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _mounts(output: str) -> list[list[str]]:
    """The mount options of /workspace, for each mountinfo listing in the output."""
    return [line.split()[5].split(",") for line in output.splitlines() if " /workspace " in line]


def test_the_preset_runs_its_commands_read_only_and_the_users_rules_as_before(
    backend: str, workspace: Path
) -> None:
    settings = {
        "shell": sandbox_settings(backend),
        "policy": {
            "presets": ["read-only"],
            "rules": [{"match": "shell:exec:grep *", "effect": "allow"}],
        },
    }
    app = make_app(settings, cwd=workspace)
    turn = run_turn(
        app,
        "show the mounts",
        script_calls(
            ("run_shell_command", {"cmd": "cat /proc/self/mountinfo"}),  # the preset's row
            ("run_shell_command", {"cmd": "grep ' /workspace ' /proc/self/mountinfo"}),  # yours
        ),
        headless=True,
    )
    assert [c["status"] for c in turn.calls] == ["ok", "ok"], turn.calls
    listings = _mounts(turn.output)
    assert len(listings) == 2, turn.output
    assert "ro" in listings[0]  # cat, allowed by the preset's row: read-only
    assert "rw" in listings[1]  # grep, allowed by your own rule: the workspace as before
    decision = next(e for e in turn.audit("decision") if "cat" in str(e["permission"]))
    assert (decision["rule"], decision["read_only"]) == ("preset read-only: cat", True)


def test_a_command_the_table_lists_wrongly_fails_instead_of_writing(
    backend: str, workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    wrong = presets.Preset("wrong-on-purpose", "a table that lists writes", f"{__name__}:WRONG")
    monkeypatch.setitem(presets.PRESETS, wrong.name, wrong)
    settings = {"shell": sandbox_settings(backend), "policy": {"presets": [wrong.name]}}
    app = make_app(settings, cwd=workspace)
    turn = run_turn(
        app,
        "write something",
        script_calls(
            ("run_shell_command", {"cmd": "touch PWNED"}),
            ("run_shell_command", {"cmd": "sort -o OUT x"}),
        ),
        headless=True,
    )
    assert [c["decision"] for c in turn.calls] == ["allow", "allow"]  # the table said so
    assert sorted(p.name for p in workspace.iterdir()) == ["x"]  # the kernel did not
    assert [c["status"] for c in turn.calls] == ["retry", "retry"]  # both failed
    said = capsys.readouterr().err
    for path in ("PWNED", "OUT"):
        line = f"allowed as read-only by the preset; it tried to write {path}"
        assert line in said, said  # the user is told, in one line
        assert line in turn.output  # and so is the model


class Brewery:
    """A third-party plugin unlike co-shell: its tool's key carries a shell command, and it
    reads how the call was let run from co_core's public API alone."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(brew, risk="exec", permission="shell:exec:{recipe}", name="brew")


def brew(ctx: ToolContext, recipe: str, vessel: str = "kettle") -> str:
    """Brew by a recipe (a shell command) in a vessel."""
    permit = current_permit()
    assert permit is not None
    return f"{recipe}: source={permit.source} rule={permit.rule} read_only={permit.read_only}"


def test_a_plugin_learns_how_its_call_was_let_run(tmp_path: Path) -> None:
    rules = [{"match": "shell:exec:make *", "effect": "allow"}]
    settings = {"policy": {"presets": ["read-only"], "rules": rules}}
    with use_plugin(Brewery(), name="brewery", settings=settings, cwd=tmp_path) as app:
        turn = run_turn(
            app,
            "brew",
            script_calls(
                ("brew", {"recipe": "ls -la"}),  # the preset's row
                ("brew", {"recipe": "make beer"}),  # the user's rule
                ("brew", {"recipe": "rm -rf hops"}),  # asked: the user says yes
            ),
            approvals=True,
        )
    lines = turn.output.splitlines()
    assert "ls -la: source=default rule=preset read-only: ls read_only=True" in lines
    assert "make beer: source=user rule=shell:exec:make * read_only=False" in lines
    assert "rm -rf hops: source=answer rule=None read_only=False" in lines
    assert current_permit() is None  # only while a call runs
