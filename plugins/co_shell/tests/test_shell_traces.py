"""A scripted turn that runs a shell command leaves a ``co.sandbox.exec`` span in the
real SQLite trace database; the command itself only when the user opted in to content."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from co_shell import shell_tools
from shell_testlib import make_workspace, run_agent

from co_core.testing import make_deps, traced

MARK = "echo SANDBOX-COMMAND-MARKER"


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = make_workspace()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _exec_spans(db: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT attributes, status FROM spans WHERE name = 'co.sandbox.exec'"
        ).fetchall()
    return [{"attributes": json.loads(a), "status": s} for a, s in rows]


def _run(co_dirs: Path, workspace: Path, content: bool, command: str) -> list[dict[str, Any]]:
    db = co_dirs / "traces.db"
    settings = {"shell": {"sandbox": "none", "timeout": 10}, "telemetry": {"sqlite_path": str(db)}}
    deps = make_deps(settings, workspace=workspace)
    try:
        with traced(deps.settings, content=content):
            run_agent(
                deps, [("run_shell_command", {"cmd": command})], [shell_tools.run_shell_command]
            )
    finally:
        deps.close()
    return _exec_spans(db)


def test_a_shell_command_leaves_a_sandbox_span(co_dirs: Path, workspace: Path) -> None:
    [exec_span] = _run(co_dirs, workspace, False, MARK)
    assert exec_span["attributes"]["co.backend"] == "none"
    assert exec_span["attributes"]["co.exit_code"] == 0
    assert exec_span["status"] == "UNSET"
    assert "SANDBOX-COMMAND-MARKER" not in json.dumps(exec_span)  # content is off by default


def test_the_command_is_recorded_only_with_content_on(co_dirs: Path, workspace: Path) -> None:
    [exec_span] = _run(co_dirs, workspace, True, MARK + "; exit 3")
    assert "SANDBOX-COMMAND-MARKER" in json.dumps(exec_span["attributes"])
    assert exec_span["attributes"]["co.exit_code"] == 3
    assert exec_span["status"] == "ERROR"
