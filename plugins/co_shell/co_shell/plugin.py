"""co-shell's hooks: a sandboxed shell, workspace file tools and the python runner.

Nothing heavy is imported here: tools are registered by path, the sandbox is built on
first use.
"""

from __future__ import annotations

from typing import Any

from co_core import hookimpl
from co_shell.keys import SANDBOX


@hookimpl
def register_settings(register: Any) -> None:
    from co_shell.settings import ShellSettings

    register("shell", ShellSettings)


@hookimpl
def register_tools(register: Any) -> None:
    # Keys name what a call will touch: resolved paths, a hash of the Python that runs.
    read, write = "co_shell.targets:reading", "co_shell.targets:writing"
    shell, files = "co_shell.shell_tools", "co_shell.file_tools"
    register(f"{shell}:run_shell_command", risk="exec", permission="shell:exec:{cmd}")
    register(
        f"{shell}:run_python",
        risk="exec",
        permission="python:run:{path}",
        resolve="co_shell.targets:python",
    )
    register(f"{files}:list_files", risk="read", permission="fs:read:{path}", resolve=read)
    register(f"{files}:read_file", risk="read", permission="fs:read:{path}", resolve=read)
    register(f"{files}:write_file", risk="write", permission="fs:write:{path}", resolve=write)
    register(f"{files}:edit_file", risk="write", permission="fs:write:{path}", resolve=write)


def sandbox_factory(settings: Any, deps: Any) -> Any:
    """Build the configured sandbox for this run's workspace (closed when Co exits)."""
    from co_shell.sandbox import make_sandbox
    from co_shell.settings import ShellSettings

    return make_sandbox(settings.section(ShellSettings), deps.workspace, deps.warn)


@hookimpl
def register_deps(register: Any) -> None:
    register(SANDBOX, sandbox_factory)


@hookimpl
def register_status_checks(register: Any) -> None:
    from co_shell.checks import sandbox_check

    register("sandbox", sandbox_check, timeout=6)


@hookimpl
def system_instructions(settings: Any) -> str | None:
    shell = settings.section("shell")
    text = (
        "Workspace tools: list_files, read_file, write_file, edit_file work on paths relative "
        "to the user's working directory; run_shell_command and run_python run there "
        "(mounted at /workspace in the sandbox). Prefer edit_file for small changes."
    )
    if shell.sandbox == "none":
        text += " WARNING: there is no sandbox; commands run directly on the user's machine."
    elif not shell.network:
        text += " The sandbox has no network access."
    return text


# docs: prompt_markers
@hookimpl
def prompt_markers(settings: Any) -> str | None:
    # Loud where the user looks: commands would run on the bare machine.
    if settings.section("shell").sandbox == "none":
        return "no-sandbox"
    return None


# /docs
