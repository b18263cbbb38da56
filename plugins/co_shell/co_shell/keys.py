"""co-shell's resource key: the sandbox of this session's workspace."""

from __future__ import annotations

from typing import TYPE_CHECKING

from co_core import ResourceKey

if TYPE_CHECKING:
    from co_shell.sandbox.base import Sandbox

SANDBOX: ResourceKey[Sandbox] = ResourceKey("shell.sandbox")
