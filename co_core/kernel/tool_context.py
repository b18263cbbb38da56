"""What a tool receives first (``ctx: ToolContext``) and the error that asks the model to retry.

Plugins take both from ``co_core``, never from pydantic-ai, so their contract is Co's: when
pydantic-ai moves or renames these, Co follows and plugins do not change. Importing this
module imports pydantic-ai, as tool modules may (they load when the agent is built); hook
modules reach it only lazily, through ``co_core``'s names.
"""

from __future__ import annotations

from typing import TypeAlias

from pydantic_ai import ModelRetry, RunContext

from co_core.kernel.deps import CoDeps

ToolContext: TypeAlias = RunContext[CoDeps]
"""A tool's first parameter: ``ctx.deps`` is the session's ``CoDeps`` (resources, settings,
the workspace, the change record); ``ctx.retry`` counts this tool's retries so far."""

__all__ = ["ModelRetry", "ToolContext"]
