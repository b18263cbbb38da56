"""The exec tools: ``run_shell_command`` and ``run_python``, both inside the sandbox.

The sandbox raises ``SandboxError`` (framework-agnostic); here it becomes ``ModelRetry``
with the exit code and the tail of the output, so the model can correct itself. What a
command changed in the workspace is recorded (snapshot before, compare after) so
``/undo`` covers it. A command that only a read-only preset allowed (``current_permit()``
says so) runs read-only: nothing to record, and if it tried to write, the user and the
model are told in one line.
"""

from __future__ import annotations

import os
import shlex
from contextlib import nullcontext

from co_core import ModelRetry, ToolContext, cancel_event, current_permit, span
from co_shell import pathsafe, python_run
from co_shell.keys import SANDBOX
from co_shell.sandbox import CommandResult, SandboxError, check
from co_shell.sandbox.base import SHELL, tried_to_write
from co_shell.settings import ShellSettings

TAIL_CHARS = 4000


def _tail(text: str) -> str:
    text = text.rstrip()
    if len(text) > TAIL_CHARS:
        return f"[... {len(text) - TAIL_CHARS} characters before ...]\n{text[-TAIL_CHARS:]}"
    return text or "(no output)"


def _show(result: CommandResult) -> str:
    return result.output.rstrip() or "(no output)"


def run_in_sandbox(
    ctx: ToolContext, argv: list[str], shown: str | None = None, *, read_only: bool = False
) -> str:
    """Run argv in the workspace sandbox, record file changes, turn failures into ModelRetry.

    ``shown`` is the command as traces name it (default: argv joined). ``read_only``: the
    sandbox mounts every path read-only for it but ``/tmp``."""
    cancel = cancel_event()  # Ctrl+C: the command is killed (Co waits for that)
    sandbox = ctx.deps.resource(SANDBOX)
    settings = ctx.deps.section(ShellSettings)
    # e.g. a new container's placeholders for .git/.co are not a change
    sandbox.prepare(read_only=read_only)
    if cancel.is_set():  # cancelled while the sandbox was starting: nothing runs
        raise ModelRetry("the command was cancelled before it started")
    backend = getattr(sandbox, "name", type(sandbox).__name__)
    # what the command changes in the workspace is recorded, so /undo covers it
    watching = (
        ctx.deps.changes.watch(ctx.deps.workspace)
        if settings.track_shell_changes and not read_only
        else nullcontext()
    )
    with watching:
        # the command is content: kept in traces only when the user opted in
        with span(
            "co.sandbox.exec",
            backend=backend,
            read_only=read_only,
            content={"command": shown or shlex.join(argv)},
        ) as s:
            result = sandbox.run(argv, settings.timeout, cancel, read_only=read_only)
            s.set(exit_code=result.exit_code, timed_out=result.timed_out)
            if result.exit_code or result.timed_out:
                s.error("timed out" if result.timed_out else f"exit code {result.exit_code}")
    tried = tried_to_write(result.output) if read_only else None
    note = f"allowed as read-only by the preset; it tried to write {tried}" if tried else ""
    if note:
        ctx.deps.warn(note)
    try:
        check(result, settings.timeout)
    except SandboxError as exc:
        lead = f"{note}. " if note else ""
        raise ModelRetry(f"{lead}{exc}. Output:\n{_tail(exc.output)}") from exc
    return f"{note}\n{_show(result)}" if note else _show(result)


def run_shell_command(ctx: ToolContext, cmd: str) -> str:
    """Run a bash command in the sandboxed workspace; returns its output."""
    if not cmd.strip():
        raise ModelRetry("cmd is empty; give a shell command such as 'ls -la'")
    permit = current_permit()  # allowed only by a read-only preset: it runs read-only
    return run_in_sandbox(ctx, [*SHELL, cmd], read_only=permit is not None and permit.read_only)


def run_python(
    ctx: ToolContext,
    code: str | None = None,
    path: str | None = None,
    args: list[str] | None = None,
) -> str:
    """Run Python in the sandbox: code, or a workspace script (path).

    Args:
        code: a snippet; the value of its last line is printed, as in the Python shell.
        args: the script's arguments.
    """
    # With a path, Co's resolver (targets.python) hands over the script's content as
    # ``code``: the bytes that were hashed for the approval run, the file is not read again.
    imports = ctx.deps.section(ShellSettings).python_workspace_imports
    if path is None:
        if code is None:
            raise ModelRetry("give either code (a snippet) or path (a .py file), not both")
        try:
            argv = python_run.snippet(code, args or [], workspace_imports=imports)
        except python_run.CodeRefused as exc:
            raise ModelRetry(str(exc)) from exc
        return run_in_sandbox(ctx, argv, shlex.join(["python3", "-c", code, *(args or [])]))
    try:
        real = pathsafe.resolve(ctx.deps.workspace, path)
    except pathsafe.PathRefused as exc:
        raise ModelRetry(str(exc)) from exc
    shown = pathsafe.relative(ctx.deps.workspace, real)
    if code is None:  # called without the resolver: read once, run what was read
        if os.path.isdir(real):
            raise ModelRetry(f"{shown!r} is a folder; give a .py file in it")
        if not os.path.isfile(real):
            raise ModelRetry(f"no file {shown!r} in the workspace; list_files shows what exists")
        code = pathsafe.read_bytes(ctx.deps.workspace, real).decode("utf-8", errors="replace")
    # "./" so that a script named like an option ("-c") is still a path in argv[0]
    script = os.path.join(".", shown)
    try:
        argv = python_run.script(code, script, args or [], workspace_imports=imports)
    except python_run.CodeRefused as exc:
        raise ModelRetry(str(exc)) from exc
    return run_in_sandbox(ctx, argv, shlex.join(["python3", script, *(args or [])]))
