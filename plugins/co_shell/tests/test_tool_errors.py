"""Every co-shell tool error is said in the tool's own words, with workspace-relative paths.

Each bad call goes through a real pydantic-ai agent (a scripted model) and the real
tools: a raw Python exception would end the run; an error text naming the host's folders
(the workspace's real path, temporary folders) would tell the model what it need not know.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from co_shell import file_tools, shell_tools
from shell_testlib import chown_tree, make_workspace, require_backend, run_agent

from co_core.testing import make_deps

TOOLS = [
    file_tools.list_files,
    file_tools.read_file,
    file_tools.write_file,
    file_tools.edit_file,
    shell_tools.run_python,
    shell_tools.run_shell_command,
]
PYTHON_WORDS = re.compile(r"Errno|Error:|Traceback|Exception|PosixPath")


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = make_workspace()
    (folder / "a.txt").write_text("hello\n")
    (folder / "folder").mkdir()
    (folder / "bin.dat").write_bytes(b"\xff\xfe\x00binary")
    os.mkfifo(folder / "pipe")
    (folder / "out").symlink_to("/etc")
    chown_tree(folder)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def bad_calls(ws: Path) -> list[tuple[str, dict[str, Any]]]:
    long = "x" * 300
    return [
        ("read_file", {"path": "missing.txt"}),
        ("read_file", {"path": str(ws / "missing.txt")}),
        ("read_file", {"path": "/workspace/nowhere/x.txt"}),
        ("read_file", {"path": "a.txt/inside"}),
        ("read_file", {"path": long}),
        ("read_file", {"path": f"folder/{long}/{long}"}),
        ("read_file", {"path": str(ws / "folder")}),
        ("read_file", {"path": "pipe"}),
        ("read_file", {"path": "sock"}),
        ("read_file", {"path": "a.txt", "start_line": 0}),
        ("read_file", {"path": "out/passwd"}),
        ("list_files", {"path": "nowhere"}),
        ("list_files", {"path": str(ws / "a.txt")}),
        ("list_files", {"path": long}),
        ("list_files", {"path": ".", "page": 0}),
        ("write_file", {"path": "a.txt/b.txt", "content": "x"}),
        ("write_file", {"path": str(ws / "folder"), "content": "x"}),
        ("write_file", {"path": f"{long}/y.txt", "content": "x"}),
        ("write_file", {"path": f"new/{long}", "content": "x"}),
        ("write_file", {"path": str(ws / ".git" / "config"), "content": "x"}),
        ("write_file", {"path": str(ws), "content": "x"}),
        ("write_file", {"path": "pipe", "content": "x"}),
        ("edit_file", {"path": "missing.txt", "search": "a", "replace": "b"}),
        ("edit_file", {"path": str(ws / "folder"), "search": "a", "replace": "b"}),
        ("edit_file", {"path": "bin.dat", "search": "a", "replace": "b"}),
        ("edit_file", {"path": "a.txt/x", "search": "a", "replace": "b"}),
        ("edit_file", {"path": long, "search": "a", "replace": "b"}),
        ("edit_file", {"path": "a.txt", "search": "absent", "replace": "b"}),
        ("run_python", {"path": "missing.py"}),
        ("run_python", {"path": str(ws / "folder")}),
        ("run_python", {"path": long}),
        ("run_python", {"code": "open('/nonexistent/x')"}),
        ("run_shell_command", {"cmd": "cat /workspace/nothing-here"}),
    ]


@pytest.mark.parametrize("backend", ["bubblewrap", "docker"])
def test_bad_calls_are_told_in_the_tools_own_words(
    co_dirs: Path, workspace: Path, backend: str
) -> None:
    image = require_backend(backend)
    shell = {"sandbox": backend, "keep_container": False, "timeout": 10}
    if image:
        shell["image"] = image
    deps = make_deps({"shell": shell}, workspace=workspace)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(workspace / "sock"))
    hidden = {str(workspace), os.path.realpath(workspace), "/tmp/", str(co_dirs)}
    try:
        for call in bad_calls(workspace):
            seen = run_agent(deps, [call], TOOLS)  # a raw exception would end the run here
            told = seen[1]  # what the tool said about the call (seen[0] is the prompt)
            assert told and told != "done", call
            for path in hidden:
                assert path not in told, (call, told)
            if "code" not in call[1] and "cmd" not in call[1]:  # not a command's own output
                assert not PYTHON_WORDS.search(told), (call, told)
    finally:
        server.close()
        deps.close()
