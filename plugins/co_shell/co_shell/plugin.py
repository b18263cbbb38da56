"""co-shell's hooks: a sandboxed shell and workspace file tools."""

from __future__ import annotations

from typing import Any

from co_core import hookimpl


@hookimpl
def register_settings(register: Any) -> None:
    from co_shell.settings import ShellSettings

    register("shell", ShellSettings)
