"""Shared helpers for co-shell's tests: real engines, real workspaces, a scripted model."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sandbox_image
from co_shell.sandbox import build
from co_shell.sandbox.base import FALLBACK_UID
from co_shell.settings import ShellSettings

_engine: dict[str, str | None] = {}


def docker_problem() -> str | None:
    """None when a Docker engine answers (starting dockerd if we may), else why not."""
    if "problem" in _engine:
        return _engine["problem"]
    problem = None
    try:
        from co_shell.sandbox.docker_sandbox import connect

        connect(timeout=5).close()
    except Exception as exc:
        problem = str(exc)
        if shutil.which("dockerd") and os.getuid() == 0 and not os.environ.get("DOCKER_HOST"):
            log = open("/tmp/dockerd.log", "ab")  # noqa: SIM115 - the daemon keeps it
            subprocess.Popen(["dockerd"], stdout=log, stderr=log, start_new_session=True)
            for _ in range(40):
                time.sleep(0.5)
                try:
                    connect(timeout=5).close()
                    problem = None
                    break
                except Exception as again:
                    problem = f"started dockerd but it does not answer: {again}"
    _engine["problem"] = problem
    return problem


def make_workspace() -> Path:
    """A workspace the sandbox user can enter and write (uid 1000 when tests run as root)."""
    folder = Path(tempfile.mkdtemp(prefix="co-ws-"))
    folder.chmod(0o755)
    if os.getuid() == 0:
        os.chown(folder, FALLBACK_UID, FALLBACK_UID)
    return folder


def chown_tree(path: Path) -> None:
    if os.getuid() != 0:
        return
    for dirpath, dirnames, filenames in os.walk(path):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), FALLBACK_UID, FALLBACK_UID)
    os.lchown(path, FALLBACK_UID, FALLBACK_UID)


def settings_for(backend: str, image: str | None = None, **values: Any) -> ShellSettings:
    base = {"sandbox": backend, "keep_container": False, "timeout": 10.0}
    if image:
        base["image"] = image
    base.update(values)
    return ShellSettings(**base)


def sandbox_for(backend: str, workspace: Path, image: str | None = None, **values: Any) -> Any:
    return build(backend, settings_for(backend, image, **values), workspace)


def require_backend(backend: str) -> str | None:
    """The docker image tag to use, after skipping (with the reason) if the backend cannot run."""
    if backend == "docker":
        problem = docker_problem()
        if problem:
            pytest.skip(f"no Docker engine could be started: {problem}")
        return sandbox_image.build()
    if backend == "bubblewrap":
        from co_shell.sandbox.base import sandbox_ids
        from co_shell.sandbox.bwrap_sandbox import probe

        problem = probe(*sandbox_ids())
        if problem:
            pytest.skip(f"bubblewrap cannot run here: {problem}")
    return None


def scripted(calls: list[tuple[str, dict[str, Any]]]) -> tuple[Callable[..., Any], list[str]]:
    """A FunctionModel script making ``calls`` one per step; returns it and what it was told."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

    seen: list[str] = []
    state = {"step": 0}

    def script(messages: list[Any], info: Any) -> ModelResponse:
        for part in messages[-1].parts:
            seen.append(str(getattr(part, "content", "")))
        step = state["step"]
        state["step"] += 1
        if step < len(calls):
            name, args = calls[step]
            return ModelResponse(parts=[ToolCallPart(name, args)])
        return ModelResponse(parts=[TextPart("done")])

    return script, seen


def run_agent(deps: Any, calls: list[tuple[str, dict[str, Any]]], tools: list[Any]) -> list[str]:
    """Run a real pydantic-ai agent whose model makes ``calls``; returns what the model saw."""
    from pydantic_ai import Agent, Tool
    from pydantic_ai.models.function import FunctionModel

    script, seen = scripted(calls)
    agent = Agent(
        FunctionModel(script), deps_type=type(deps), tools=[Tool(t, max_retries=5) for t in tools]
    )
    agent.run_sync("go", deps=deps)
    return seen


def sandbox_settings(backend: str, **shell: Any) -> dict[str, Any]:
    """The ``shell`` section for ``backend`` (skipped with the reason if it cannot run here)."""
    image = require_backend(backend)
    values: dict[str, Any] = {"sandbox": backend, "keep_container": False, "timeout": 20}
    if image:
        values["image"] = image
    return {**values, **shell}


def sandbox_deps(backend: str, workspace: Path, **shell: Any) -> Any:
    """Deps whose sandbox is ``backend``."""
    from co_core.testing import make_deps

    return make_deps({"shell": sandbox_settings(backend, **shell)}, workspace=workspace)


def shell_output(deps: Any, cmd: str) -> str:
    """What the model is told when it runs ``cmd``: the output, or the failure with it."""
    from types import SimpleNamespace

    from co_shell import shell_tools
    from pydantic_ai import ModelRetry

    try:
        return shell_tools.run_shell_command(SimpleNamespace(deps=deps), cmd)
    except ModelRetry as exc:
        return str(exc)


def fixture_workspace() -> Iterator[Path]:
    folder = make_workspace()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


# A Python script that forks until the kernel refuses (or 200 times) and prints how many
# it made: what a sandbox's process cap allows, counted from inside
FORK_UNTIL_REFUSED = """
import os, time
n = 0
while n < 200:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(2)
        os._exit(0)
    n += 1
print(n)
"""
