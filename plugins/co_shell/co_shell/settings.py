"""co-shell settings (section ``shell``)."""

from __future__ import annotations

from typing import Literal

from co_core import SectionModel, setting

Backend = Literal["docker", "bubblewrap", "none"]


class ShellSettings(SectionModel):
    sandbox: Literal["auto", "docker", "bubblewrap", "none"] = setting(
        "auto",
        env="CO_SHELL_SANDBOX",
        help="auto (Docker with its image here, else bubblewrap), docker, bubblewrap, "
        "or none (runs on the host!)",
    )
    fallback: Backend | None = setting(
        None, help="backend to use when the chosen one is unavailable"
    )
    image: str = setting(
        "python:3.12-slim", env="CO_SHELL_IMAGE", help="Docker image for the sandbox"
    )
    network: bool = setting(False, help="allow network access from the sandbox")
    timeout: float = setting(30.0, gt=0, help="seconds a command may run")
    memory: str = setting("512m", help="memory limit (Docker syntax: 512m, 2g)")
    cpus: float = setting(1.0, gt=0, help="CPU limit")
    pids: int = setting(256, ge=16, help="process limit (stops fork bombs)")
    output_limit: int = setting(
        32768, ge=1024, help="bytes of command output kept (the rest is cut, visibly)"
    )
    keep_container: bool = setting(
        True, help="leave the Docker container running on exit for reuse"
    )
    python_workspace_imports: bool = setting(
        False,
        help="let run_python import modules from the workspace (the script's folder, or the "
        "workspace for a snippet); the approval then does not cover what they run",
    )
    track_shell_changes: bool = setting(
        True,
        help="snapshot the workspace around each command so /undo covers what it changed",
    )
