"""The slash commands that work on the user's and the project's files: ``/memory``,
``/init``, and the user's own commands (Markdown files, co_core.agent.commands).

A command that needs the model (``/init``, a user's command) does not answer itself: it
returns a :class:`TurnRequest`, which the REPL runs as a turn like typed words (the same
spinner, approvals, Ctrl+C), offering only the tools it names, and then hands the turn's
result to ``then``. Each use is written to the audit trail.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from co_core.agent.commands import UserCommand
from co_core.kernel.errors import CoError

if TYPE_CHECKING:
    from co_core.agent.conversation import Conversation, TurnResult
    from co_core.agent.memory import Scope

MEMORY_USAGE = "usage: /memory, /memory add [--project] TEXT, /memory edit [--project]"


@dataclass
class TurnRequest:
    """A turn a slash command asks for: ``text`` sent to the model, only ``tools``
    offered (None: as any turn), ``then`` told the result."""

    text: str
    tools: tuple[str, ...] | None = None
    then: Callable[[TurnResult], Awaitable[str | None]] | None = None
    notes: list[str] = field(default_factory=list)  # said before the turn starts
    mentions: bool = True  # ``@path`` in the text is read in (not in /init's file list)
    memory: bool = True  # the model is told the user's memory (not for /init's shared file)


def audit(conversation: Conversation, event: str, fields: dict[str, Any]) -> None:
    """One line in the session's audit trail (masked, as every line is)."""
    log = conversation.ready().calls.engine.audit
    if log is not None:
        log.write(event, fields)


# -- /memory ------------------------------------------------------------------------------


def memory(conversation: Conversation, arg: str) -> str:
    from co_core.agent.memory import HEADER, file_for, load_memory, user_file

    words = arg.strip()
    action, _, rest = words.partition(" ")
    project = False
    if rest.startswith("--project"):
        project, rest = True, rest.removeprefix("--project").strip()
    elif action == "--project":
        return MEMORY_USAGE
    cwd = conversation.app.cwd
    scope: Scope = "project" if project else "user"
    if not words:
        found = load_memory(cwd)
        lines = []
        for memory_file in found.files:
            body = memory_file.text.removeprefix(HEADER).strip() or "(empty)"
            lines += [f"{memory_file.scope} memory, {memory_file.path}:", body, ""]
        if not found.files:
            lines.append(f"No memory yet. /memory add TEXT keeps a line in {user_file()}.")
        return "\n".join([*lines, *found.notices]).rstrip()
    if action == "add":
        from co_core.agent.memory import append

        path, line = append(scope, rest, cwd)
        audit(
            conversation,
            "memory",
            {"action": "add", "scope": scope, "path": str(path), "line": line},
        )
        return f"Remembered in {path}: {line}"
    if action == "edit" and not rest:
        path = file_for(scope, cwd)
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if not editor:
            raise CoError(f"set $EDITOR (or $VISUAL) to edit {path}; or /memory add TEXT")
        if not path.exists():
            from co_core.kernel import paths

            paths.write_private(path, HEADER)
        try:
            subprocess.run([*shlex.split(editor), str(path)], check=False)
        except OSError as exc:
            raise CoError(f"cannot start {editor!r}: {exc.strerror or exc}") from None
        audit(conversation, "memory", {"action": "edit", "scope": scope, "path": str(path)})
        return f"Memory {path} saved; the next request reads it."
    return MEMORY_USAGE


# -- /init --------------------------------------------------------------------------------


def init(conversation: Conversation, arg: str) -> str | TurnRequest:
    from co_core.agent import init as drafting
    from co_core.agent.typed import tool_for

    workspace = conversation.app.cwd
    found = drafting.exists(workspace)
    if found is not None:
        return f"{found} exists: edit it (Co reads it at the start of each session)"
    tool_for(conversation, "write")  # no tool to write it with: said before drafting

    async def then(result: TurnResult) -> str | None:
        draft = drafting.draft_of(result.output)
        if not draft.strip():
            return "The model drafted nothing; nothing was written."
        done = await drafting.write(conversation, draft)
        audit(conversation, "init", {"path": str(workspace / drafting.NAME), "written": done.ok})
        if done.ok:
            return f"Wrote {workspace / drafting.NAME} ({len(draft.splitlines())} lines); edit it as you like."
        return f"Not written: {done.text}"

    request = drafting.request(workspace)
    return TurnRequest(
        request,
        (),
        then,
        notes=["Drafting AGENTS.md from the project…"],
        mentions=False,
        memory=False,
    )


# -- the user's own commands --------------------------------------------------------------


def own(conversation: Conversation, command: UserCommand, arg: str) -> TurnRequest:
    notes = []
    if command.tools is not None:
        known = set(conversation.ready().specs)
        unknown = [t for t in command.tools if t not in known]
        if unknown:
            notes.append(
                f"/{command.name}: {', '.join(unknown)} in {command.path}'s tools "
                f"{'is' if len(unknown) == 1 else 'are'} not installed; left out"
            )
    audit(
        conversation,
        "command",
        {
            "command": command.name,
            "source": str(command.path),
            "scope": command.scope,
            "tools": list(command.tools) if command.tools is not None else None,
            "arguments": arg,
        },
    )
    return TurnRequest(command.prompt(arg), command.tools, notes=notes)
