"""The ``remember`` tool: the model proposes one line for the user's memory.

It is a write like any other: risk ``write``, permission ``memory:write:user`` (or
``memory:write:project``), so it is asked about unless a rule allows it, and the line the
user approves is the line written: the resolver masks it and puts it on one line before
the decision (co_core.agent.memory).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from co_core.agent.memory import SCOPES, append, file_for, one_line
from co_core.kernel.deps import CoDeps
from co_core.kernel.tool_context import ToolContext
from co_core.kernel.tools import CallRefused, Resolved

PERMISSION = "memory:write:{scope}"


def resolve_remember(args: Mapping[str, object], deps: CoDeps) -> Resolved:
    """The line as it will be written (masked, one line) and the memory it goes to; a
    project memory in an untrusted folder is refused before anyone is asked."""
    scope = args.get("scope", "user")
    if scope not in SCOPES:
        raise CallRefused("scope must be 'user' or 'project'")
    line = one_line(str(args.get("line", "")))
    if not line:
        raise CallRefused("line must say what to remember")
    file_for(scope, Path(deps.workspace))
    return Resolved({**args, "scope": scope, "line": line})


def remember(ctx: ToolContext, line: str, scope: Literal["user", "project"] = "user") -> str:
    """Save a line the user wants kept to their memory (or the project's)."""
    path, written = append(scope, line, Path(ctx.deps.workspace))
    return f"remembered in {path}: {written}"
