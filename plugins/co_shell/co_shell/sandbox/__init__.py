"""Sandboxes for shell commands: one interface (``run(argv, timeout)``), three backends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from co_shell.sandbox.base import (
    CommandResult,
    Sandbox,
    SandboxError,
    SandboxUnavailable,
    check,
)
from co_shell.settings import ShellSettings

__all__ = [
    "CommandResult",
    "Sandbox",
    "SandboxError",
    "SandboxUnavailable",
    "build",
    "check",
    "make_sandbox",
]


def build(backend: str, settings: ShellSettings, workspace: Path) -> Any:
    """One backend by name; raises SandboxUnavailable with the reason and the fix."""
    if backend == "docker":
        from co_shell.sandbox.docker_sandbox import DockerSandbox

        return DockerSandbox(settings, workspace)
    if backend == "bubblewrap":
        from co_shell.sandbox.bwrap_sandbox import BubblewrapSandbox

        return BubblewrapSandbox(settings, workspace)
    if backend == "none":
        from co_shell.sandbox.host_sandbox import HostSandbox

        return HostSandbox(settings, workspace)
    raise SandboxUnavailable(f"unknown sandbox {backend!r}: use docker, bubblewrap or none")


def make_sandbox(settings: ShellSettings, workspace: Path, say: Callable[[str], None]) -> Any:
    """The configured backend, or the configured fallback (said out loud) if it is unavailable."""
    try:
        sandbox = build(settings.sandbox, settings, workspace)
    except SandboxUnavailable as exc:
        if not settings.fallback or settings.fallback == settings.sandbox:
            raise
        sandbox = build(settings.fallback, settings, workspace)
        say(f"{exc}; using the fallback sandbox {settings.fallback!r}")
    if sandbox.name == "none":
        from co_shell.sandbox.host_sandbox import WARNING

        say(WARNING)
    return sandbox
