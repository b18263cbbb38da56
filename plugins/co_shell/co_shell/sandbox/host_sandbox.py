"""The ``none`` backend: commands run on the host, in the workspace, as the user.

Only by explicit choice (``shell.sandbox = "none"``), and Co says so in ``co status``
and in the prompt line. It still gets the minimal environment, the timeout, the output cap and
rlimits, and its process group is killed when it returns (a process that starts its own
session, e.g. with ``setsid``, escapes that), but nothing stops it from reading or
writing anything the user can.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

from co_shell.sandbox.base import READING_ENV, CommandResult, SandboxUnavailable, minimal_env
from co_shell.sandbox.process import limiter, parse_size, run_process
from co_shell.settings import ShellSettings

WARNING = "shell commands run on the host with no sandbox (shell.sandbox = none)"


class HostSandbox:
    name = "none"
    workdir: str

    def __init__(self, settings: ShellSettings, workspace: Path) -> None:
        self.settings = settings
        self.workspace = Path(os.path.realpath(workspace))
        self.workdir = str(self.workspace)
        if shutil.which("bash") is None:
            raise SandboxUnavailable("bash is not installed; Co runs commands with bash")

    def run(
        self,
        argv: list[str],
        timeout: float | None = None,
        cancel: threading.Event | None = None,
        *,
        read_only: bool = False,
    ) -> CommandResult:
        """``read_only`` cannot be kept here (nothing is mounted): the command runs as
        any other, which is what ``shell.sandbox = none`` says."""
        extra = {"PWD": self.workdir, **(READING_ENV if read_only else {})}
        return run_process(
            argv,
            env=minimal_env(extra),
            cwd=self.workdir,
            timeout=timeout or self.settings.timeout,
            output_limit=self.settings.output_limit,
            preexec=limiter(parse_size(self.settings.memory), None),
            cancel=cancel,
        )

    def prepare(self, *, read_only: bool = False) -> None:
        """Nothing to start."""

    def close(self) -> None:
        """Nothing to clean up."""
