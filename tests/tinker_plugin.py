"""A third-party-like plugin for the features that pick tools by what they declare (``!``,
``@``, ``/init``): its tools and arguments are named unlike co-shell's, and it declares
only the shared key families (``shell:exec:{line}``, ``fs:read:{where}``,
``fs:write:{where}``), a risk, and docstrings."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from co_core import CallRefused, CoDeps, Resolved, ToolContext, hookimpl


def _inside(deps: CoDeps, where: object) -> Path:
    root = Path(deps.workspace).resolve()
    target = (root / str(where)).resolve()
    if target != root and root not in target.parents:
        raise CallRefused(f"{where} is outside the workspace")
    if not target.exists():
        raise CallRefused(f"there is no {where} in the workspace")
    return target


def where_is(args: Mapping[str, object], deps: CoDeps) -> Resolved:
    target = _inside(deps, args.get("where", "."))
    root = Path(deps.workspace).resolve()
    return Resolved({**args, "where": str(target.relative_to(root)) if target != root else "."})


def where_to(args: Mapping[str, object], deps: CoDeps) -> Resolved:
    root = Path(deps.workspace).resolve()
    target = (root / str(args.get("where", ""))).resolve()
    if root not in target.parents:
        raise CallRefused("only files inside the workspace can be stored")
    return Resolved({**args, "where": str(target.relative_to(root))})


def execute_line(ctx: ToolContext, line: str) -> str:
    """Execute one line of bash in the workspace and give back what it printed."""
    done = subprocess.run(
        ["bash", "-c", line], cwd=ctx.deps.workspace, capture_output=True, text=True, timeout=30
    )
    return (done.stdout + done.stderr).rstrip() or "(nothing printed)"


def peek(ctx: ToolContext, where: str) -> str:
    """Open a workspace file and give its text."""
    return (Path(ctx.deps.workspace) / where).read_text(encoding="utf-8")


def survey(ctx: ToolContext, where: str = ".") -> str:
    """List the entries of a workspace folder."""
    folder = Path(ctx.deps.workspace) / where
    return "\n".join(sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir()))


def put(ctx: ToolContext, where: str, body: str) -> str:
    """Store a text as a workspace file."""
    target = Path(ctx.deps.workspace) / where
    ctx.deps.changes.before_write(target)
    target.write_text(body, encoding="utf-8")
    return f"stored {len(body)} characters in {where}"


class Tinker:
    """Register with ``use_plugin(Tinker(), name="tinker")``."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        here = "tinker_plugin"
        register(f"{here}:execute_line", risk="exec", permission="shell:exec:{line}")
        found = f"{here}:where_is"
        register(f"{here}:peek", risk="read", permission="fs:read:{where}", resolve=found)
        register(f"{here}:survey", risk="read", permission="fs:read:{where}", resolve=found)
        register(
            f"{here}:put", risk="write", permission="fs:write:{where}", resolve=f"{here}:where_to"
        )
