"""A path that changes while Co follows it ends as a refusal, never an exception.

Another process swaps a workspace folder for a symlink out of the workspace and back, as
fast as it can, while Co resolves, reads and writes paths through it: every call either
works on the file inside the workspace or is refused with a reason. ``co mcp serve``
answers every call with a tool result (ok, or an error result saying why), never an
internal error with a traceback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from co_shell import pathsafe, targets
from shell_testlib import make_workspace

from co_core import CallRefused
from co_core.testing import make_deps

SWAP = """
import os, sys, time
ws, out = sys.argv[1], sys.argv[2]
while True:
    try:
        os.rename(ws + "/d", ws + "/d.real")
        os.symlink(out, ws + "/d")
        time.sleep(0.0002)
        os.unlink(ws + "/d")
        os.rename(ws + "/d.real", ws + "/d")
        time.sleep(0.0002)
    except OSError:
        pass
"""


@pytest.fixture
def racing(tmp_path: Path) -> Iterator[Path]:
    """A workspace whose folder ``d`` keeps turning into a symlink to ``outside``."""
    workspace = make_workspace()
    (workspace / "d" / "sub").mkdir(parents=True)
    (workspace / "d" / "sub" / "f.txt").write_text("inside")
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "f.txt").write_text("OUTSIDE")
    swapper = subprocess.Popen([sys.executable, "-c", SWAP, str(workspace), str(outside)])
    try:
        yield workspace
    finally:
        swapper.kill()
        swapper.wait()
        shutil.rmtree(workspace, ignore_errors=True)
    assert (outside / "sub" / "f.txt").read_text() == "OUTSIDE"  # never written through


def test_resolving_reading_and_writing_end_as_work_or_a_refusal(racing: Path) -> None:
    seen: Counter[str] = Counter()
    for _ in range(4000):
        for write in (False, True):
            try:
                real = pathsafe.resolve(racing, "d/sub/f.txt", write=write)
                assert real.is_relative_to(os.path.realpath(racing))
                if write:
                    pathsafe.write_bytes(racing, real, b"inside")
                else:
                    assert pathsafe.read_bytes(racing, real) == b"inside"
                seen["ok"] += 1
            except pathsafe.PathRefused:
                seen["refused"] += 1
            except OSError as exc:  # mid-walk at run time: the tools say it in one line
                seen[type(exc).__name__] += 1
    assert seen["refused"] > 0, seen  # the race was really run
    assert set(seen) <= {"ok", "refused", "FileNotFoundError", "FileExistsError"} | {
        "NotADirectoryError"
    }, seen


def test_the_resolvers_refuse_never_raise(co_dirs: Path, racing: Path) -> None:
    deps = make_deps({"policy": {"rules": []}}, workspace=racing)
    seen: Counter[str] = Counter()
    try:
        for _ in range(1500):
            for resolver in (targets.reading, targets.writing, targets.python):
                try:
                    resolver({"path": "d/sub/f.txt"}, deps)
                    seen["ok"] += 1
                except CallRefused:
                    seen["refused"] += 1
    finally:
        deps.close()
    assert seen["refused"] > 0 and set(seen) == {"ok", "refused"}, seen


def test_co_mcp_serve_answers_every_call_under_the_race(co_dirs: Path, racing: Path) -> None:
    from mcp import Client, StdioServerParameters

    env = {
        "CO_LOAD_PLUGINS": "shell",
        "CO_SHELL_SANDBOX": "none",
        **{
            f"CO_{k.upper()}_DIR": str(co_dirs.parent / f"co-{k}")
            for k in ("config", "data", "cache")
        },
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "co_core", "mcp", "serve"], env=env, cwd=str(racing)
    )

    async def main() -> list[Any]:
        async with Client(params) as client:
            return [
                await client.call_tool("read_file", {"path": "d/sub/f.txt"}) for _ in range(300)
            ]

    results = anyio.run(main)
    texts = ["".join(getattr(p, "text", "") for p in r.content) for r in results]
    assert all("Traceback" not in t and "OUTSIDE" not in t for t in texts)
    refused = [t for t, r in zip(texts, results, strict=True) if r.is_error]
    reasons = ("changed", "symlink", "outside the workspace", "no file", "does not exist")
    assert all(any(why in t for why in reasons) and "\n" not in t for t in refused), refused
    assert refused and any(not r.is_error for r in results)
