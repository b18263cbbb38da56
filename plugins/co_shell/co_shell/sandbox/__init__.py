"""Sandboxes for shell commands: one interface (``run(argv, timeout)``), three backends,
and ``auto`` choosing among them (``choice``)."""

from __future__ import annotations

import threading
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
    "SandboxSwitch",
    "SandboxUnavailable",
    "build",
    "check",
    "make_sandbox",
]


def build(backend: str, settings: ShellSettings, workspace: Path) -> Any:
    """One backend by name (``auto``: the first that can run here); raises
    SandboxUnavailable with the reason and the fix."""
    if backend == "auto":
        from co_shell.sandbox.choice import choose

        backend = choose(settings).backend
    if backend == "docker":
        from co_shell.sandbox.docker_sandbox import DockerSandbox

        return DockerSandbox(settings, workspace)
    if backend == "bubblewrap":
        from co_shell.sandbox.bwrap_sandbox import BubblewrapSandbox

        return BubblewrapSandbox(settings, workspace)
    if backend == "none":
        from co_shell.sandbox.host_sandbox import HostSandbox

        return HostSandbox(settings, workspace)
    raise SandboxUnavailable(f"unknown sandbox {backend!r}: use auto, docker, bubblewrap or none")


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


class SandboxSwitch:
    """The workspace's sandbox as the settings say *now*: before each command the
    ``shell`` section is read again (``settings()``), and when it changed the sandbox is
    rebuilt for it (the old one closed), so ``co config set shell.sandbox bubblewrap``
    applies from the next command. A backend that could not be built is tried again at
    the next command (Docker may have been started meanwhile)."""

    def __init__(
        self,
        settings: Callable[[], ShellSettings],
        workspace: Path,
        say: Callable[[str], None],
    ) -> None:
        self.settings, self.workspace, self.say = settings, workspace, say
        self._sandbox: Any = None
        self._made_for: ShellSettings | None = None

    def current(self) -> Any:
        wanted = self.settings()
        if self._sandbox is not None and wanted == self._made_for:
            return self._sandbox
        before = self._sandbox
        if before is not None:
            self._sandbox = self._made_for = None
            before.close()
        self._sandbox = make_sandbox(wanted, self.workspace, self.say)
        self._made_for = wanted
        if before is not None and before.name != self._sandbox.name:
            self.say(f"shell settings changed: commands now run in {self._sandbox.name}")
        return self._sandbox

    @property
    def name(self) -> str:
        return str(self.current().name)

    def __getattr__(self, attribute: str) -> Any:
        """Anything else is the current backend's (e.g. a Docker sandbox's ``container``)."""
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(self.current(), attribute)

    def prepare(self, *, read_only: bool = False) -> None:
        self.current().prepare(read_only=read_only)

    def run(
        self,
        argv: list[str],
        timeout: float | None = None,
        cancel: threading.Event | None = None,
        *,
        read_only: bool = False,
    ) -> CommandResult:
        result: CommandResult = self.current().run(argv, timeout, cancel, read_only=read_only)
        return result

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = self._made_for = None
