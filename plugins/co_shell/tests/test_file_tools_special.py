"""The file tools on what is not a plain text file: pipes, devices, sockets, huge sparse files."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from co_shell import file_tools
from pydantic_ai import ModelRetry
from shell_testlib import make_workspace

from co_core.testing import make_deps


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = make_workspace()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def ctx(co_dirs: Path, workspace: Path) -> Iterator[Any]:
    deps = make_deps({"shell": {"sandbox": "none"}}, workspace=workspace)
    yield SimpleNamespace(deps=deps)
    deps.close()


def _within(seconds: float, call: Any, unblock: Any) -> Any:
    """``call()``'s result or exception, failing the test if it is still blocked after ``seconds``."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        unblock()  # let the stuck thread go before failing
        worker.join(5)
        pytest.fail(f"still blocked after {seconds} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _open_writer(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    os.close(fd)


def test_a_fifo_is_refused_without_blocking(ctx: Any, workspace: Path) -> None:
    fifo = workspace / "pipe"
    os.mkfifo(fifo)
    for tool, args in [
        (file_tools.read_file, ("pipe",)),
        (file_tools.edit_file, ("pipe", "a", "b")),
        (file_tools.write_file, ("pipe", "text")),
    ]:
        with pytest.raises(ModelRetry, match="'pipe' is a named pipe.*not a regular file"):
            _within(10, lambda tool=tool, args=args: tool(ctx, *args), lambda: _open_writer(fifo))
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # left as it was


def test_sockets_and_devices_are_refused(ctx: Any, workspace: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(workspace / "sock"))
    try:
        with pytest.raises(ModelRetry, match="'sock' is a socket.*not a regular file"):
            file_tools.read_file(ctx, "sock")
    finally:
        server.close()
    if os.getuid() != 0:
        return  # only root may make device nodes
    os.mknod(workspace / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    with pytest.raises(ModelRetry, match="'null' is a device.*not a regular file"):
        file_tools.read_file(ctx, "null")
    with pytest.raises(ModelRetry, match="'null' is a device"):
        file_tools.edit_file(ctx, "null", "a", "b")


READER = """
import json, resource, sys
from types import SimpleNamespace
from pathlib import Path
from co_shell import file_tools

ctx = SimpleNamespace(deps=SimpleNamespace(workspace=Path(sys.argv[1])))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
text = file_tools.read_file(ctx, "huge.log")
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"grew_kb": after - before, "length": len(text), "head": text[:40],
                  "tail": text[-300:]}))
"""


def test_a_huge_sparse_file_is_not_read_whole(workspace: Path) -> None:
    huge = workspace / "huge.log"
    with open(huge, "wb") as handle:
        handle.write(b"".join(b"line %d of the log\n" % i for i in range(10_000)))
        handle.truncate(2 * 1024**3)  # 2 GB, nearly all of it a hole
    done = subprocess.run(
        [sys.executable, "-c", READER, str(workspace)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["grew_kb"] < 64 * 1024, seen  # not the 2 GB (nor a copy of it)
    assert seen["head"].startswith("line 0 of the log\n")
    assert seen["length"] <= file_tools.READ_LIMIT + 500
    assert "2.0 GB" in seen["tail"] and "start_line=" in seen["tail"]


def test_long_files_still_read_in_ranges(ctx: Any, workspace: Path) -> None:
    (workspace / "lines.txt").write_text("".join(f"row {i}\n" for i in range(1, 30_001)))
    first = file_tools.read_file(ctx, "lines.txt")
    assert first.startswith("row 1\n") and "call read_file with start_line=" in first
    following = int(first.rsplit("start_line=", 1)[1].split()[0])
    second = file_tools.read_file(ctx, "lines.txt", following)
    assert second.startswith(f"row {following}\n")
    assert file_tools.read_file(ctx, "lines.txt", 29_999, 30_000) == "row 29999\nrow 30000\n"
    past = file_tools.read_file(ctx, "lines.txt", 40_000)
    assert "has no lines in that range" in past and "30000 lines" in past
    (workspace / "one.txt").write_text("z" * 200_000 + "\nnext\n")
    long_line = file_tools.read_file(ctx, "one.txt")
    assert long_line.startswith("z" * 1000) and "line 1" in long_line
    assert "start_line=2" in long_line and len(long_line) < file_tools.READ_LIMIT + 500
    assert file_tools.read_file(ctx, "one.txt", 2) == "next\n"
