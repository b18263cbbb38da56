"""co-shell's hooks: a sandboxed shell, workspace file tools and the python runner.

Nothing heavy is imported here: tools are registered by path, the sandbox is built on
first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from co_core import hookimpl
from co_shell.keys import SANDBOX

if TYPE_CHECKING:
    from co_core import (
        ResourceRegister,
        Role,
        Settings,
        SettingsRegister,
        StatusCheckRegister,
        ToolRegister,
    )


@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_shell.settings import ShellSettings

    register("shell", ShellSettings)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    # Keys name what a call will touch: resolved paths, a hash of the Python that runs, the
    # shell command as Co spells it (and runs it).
    read = "co_shell.targets:reading"
    shell, files = "co_shell.shell_tools", "co_shell.file_tools"
    register(
        f"{shell}:run_shell_command",
        risk="exec",
        permission="shell:exec:{cmd}",
        resolve="co_shell.targets:shell",
        does="runs",
        roles={"cmd": "text"},
    )
    register(
        f"{shell}:run_python",
        risk="exec",
        permission="python:run:{path}",
        resolve="co_shell.targets:python",
        does="runs",
        roles={"code": "text", "path": "target"},
    )
    where: dict[str, Role] = {"path": "target"}  # page and flags: options (defaults)
    register(
        f"{files}:list_files",
        risk="read",
        permission="fs:read:{path}",
        resolve=read,
        does="lists",
        roles=where,
    )
    register(
        f"{files}:read_file",
        risk="read",
        permission="fs:read:{path}",
        resolve=read,
        does="reads",
        roles=where,
    )
    register(
        "co_shell.file_search:search_files",
        risk="read",
        permission="fs:read:{path}",
        resolve=read,
        does="searches",
        roles={"query": "query", "path": "target"},
    )
    register_changes(register)


# docs: roles
def register_changes(register: ToolRegister) -> None:
    """The tools that change files: a file's new content, and the text an edit finds and
    puts instead, are given whole; a setting's new value may be a word of the sentence."""
    files, write = "co_shell.file_tools", "co_shell.targets:writing"
    register(
        f"{files}:write_file",
        risk="write",
        permission="fs:write:{path}",
        resolve=write,
        does="writes",
        roles={"path": "target", "content": "content"},
    )
    register(
        f"{files}:edit_file",
        risk="write",
        permission="fs:write:{path}",
        resolve=write,
        does="writes",
        roles={"path": "target", "search": "content", "replace": "content"},
    )
    register(
        f"{files}:set_file_value",
        risk="write",
        permission="fs:write:{path}",
        resolve="co_shell.targets:setting",
        does="writes",
        roles={"path": "target", "key": "target", "value": "text"},
    )


# /docs


def sandbox_factory(deps: Any) -> Any:
    """The workspace's sandbox, following the ``shell`` settings as they change (built
    on first use, closed when Co exits)."""
    from co_shell.sandbox import SandboxSwitch
    from co_shell.settings import ShellSettings

    return SandboxSwitch(lambda: deps.section(ShellSettings), deps.workspace, deps.warn)


@hookimpl
def register_deps(register: ResourceRegister) -> None:
    register(SANDBOX, sandbox_factory)


@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    from co_shell.checks import sandbox_check

    register("sandbox", sandbox_check, timeout=6)


@hookimpl
def system_instructions(settings: Settings) -> str | None:
    from co_shell.settings import ShellSettings

    shell = settings.section(ShellSettings)
    text = (
        "Workspace tools: list_files, read_file, search_files, write_file, edit_file, "
        "set_file_value work "
        "on paths relative to the user's working directory; run_shell_command and run_python "
        "run there (mounted at /workspace in the sandbox). Prefer edit_file for small "
        "changes, set_file_value for one setting of a config file."
    )
    if shell.sandbox == "none":
        text += " WARNING: there is no sandbox; commands run directly on the user's machine."
    elif not shell.network:
        text += " The sandbox has no network access."
    return text


DOCKER_SOCKET = "/var/run/docker.sock"  # where docker-py looks when DOCKER_HOST is unset


def _backend_missing(backend: str) -> str | None:
    """Why ``backend`` cannot run here, judged from files and PATH only (no engine ping)."""
    import os
    import shutil

    if backend == "docker":
        if os.environ.get("DOCKER_HOST") or os.path.exists(DOCKER_SOCKET):
            return None
        return "Docker is not running here"
    if backend == "bubblewrap":
        return None if shutil.which("bwrap") else "bubblewrap is not installed"
    if backend == "auto":
        if _backend_missing("docker") is None or _backend_missing("bubblewrap") is None:
            return None
        return "no sandbox here (neither Docker nor bubblewrap)"
    return None


@hookimpl
def plugin_ready(settings: Settings) -> dict[str, str] | None:
    # Only the commands need a sandbox; the file tools work on the workspace directly.
    from co_shell.settings import ShellSettings

    shell = settings.section(ShellSettings)
    problem = _backend_missing(shell.sandbox)
    if problem is None or (shell.fallback and _backend_missing(shell.fallback) is None):
        return None
    other = "bubblewrap" if shell.sandbox == "docker" else "docker"
    if shell.sandbox == "auto":
        line = f"{problem}: install bubblewrap (`apt install bubblewrap`) or start Docker"
    elif _backend_missing(other) is None:
        line = f"{problem}: run `co config set shell.sandbox {other}`"
    else:
        line = (
            f"{problem}: install bubblewrap (`apt install bubblewrap`) or Docker, "
            "then `co config set shell.sandbox bubblewrap` (or docker)"
        )
    return {"run_shell_command": line, "run_python": line}


# docs: prompt_markers
@hookimpl
def prompt_markers(settings: Settings) -> str | None:
    # Loud where the user looks: commands would run on the bare machine.
    from co_shell.settings import ShellSettings

    if settings.section(ShellSettings).sandbox == "none":
        return "no-sandbox"
    return None


# /docs
