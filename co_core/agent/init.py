"""``/init``: draft this folder's ``AGENTS.md`` from the project, and write it only on a yes.

Co gathers what the project says about itself (its files, its manifests, the start of its
README) and asks the model, in a turn without tools, to draft the instructions file from
that. The draft is then written by the workspace's tool that writes files (chosen by
what it declares, co_core.agent.tools.kinds), through the call pipeline: decided by the
policy and asked about like any write, its ``execution`` line in the audit trail, undone
by ``/undo``. An ``AGENTS.md`` that exists is never overwritten by ``/init``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from co_core.agent.instructions import NAME
from co_core.kernel.gitfiles import workspace_files
from co_core.kernel.userfiles import read_text

if TYPE_CHECKING:
    from co_core.agent.conversation import Conversation
    from co_core.agent.typed import Done

MANIFESTS = (
    "pyproject.toml",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "Makefile",
    "justfile",
    "pom.xml",
    "build.gradle",
    "Gemfile",
    "composer.json",
    "CMakeLists.txt",
    "tox.ini",
    "setup.cfg",
)
READMES = ("README.md", "README.rst", "README.txt", "README", "CONTRIBUTING.md")
LISTED = 120  # files named in the request
MANIFEST_LINES = 60
README_LINES = 40

REQUEST = """\
Draft an {name} file for this project: the instructions an AI coding assistant should \
follow when it works here. Keep it short (under 60 lines) and concrete: what the project \
is, how it is laid out, how to build, run the tests and lint (the exact commands), and \
the conventions its files show. Say nothing you cannot see below. Reply with the file's \
Markdown only, starting with a "# " title, without a code fence around it.

What the project shows:

{facts}
"""


def exists(workspace: Path) -> Path | None:
    found = workspace / NAME
    return found if found.exists() or found.is_symlink() else None


def files(workspace: Path) -> list[str]:
    """The project's files as git knows them (ignored ones left out)."""
    return workspace_files(workspace, limit=2000)


def _head(path: Path, lines: int) -> str | None:
    try:
        text = read_text(path, 16 * 1024).text
    except OSError:
        return None
    return "\n".join(text.splitlines()[:lines])


def facts(workspace: Path) -> str:
    """What the request tells the model about the project."""
    names = files(workspace)
    shown = names[:LISTED]
    more = f"\n… and {len(names) - LISTED} more" if len(names) > LISTED else ""
    parts = [f"Files ({len(names)}):\n" + "\n".join(shown) + more]
    for name in (*MANIFESTS, *READMES):
        lines = README_LINES if name in READMES else MANIFEST_LINES
        head = _head(workspace / name, lines)
        if head is not None and head.strip():
            parts.append(f"{name} (first {lines} lines):\n{head}")
    return "\n\n".join(parts)


def request(workspace: Path) -> str:
    return REQUEST.format(name=NAME, facts=facts(workspace))


FENCE = re.compile(r"\A\s*```[a-zA-Z]*\n(.*?)\n```\s*\Z", re.S)


def draft_of(answer: str) -> str:
    """The file's text from the model's answer (a fence around it taken off)."""
    found = FENCE.match(answer)
    text = found.group(1) if found else answer
    return text.strip() + "\n"


async def write(conversation: Conversation, draft: str) -> Done:
    """Write the draft through the pipeline, asked about like any write."""
    from co_core.agent.typed import call, tool_for

    chosen = tool_for(conversation, "write")
    assert chosen.content is not None
    return await call(
        conversation, chosen, {chosen.argument: NAME, chosen.content: draft}, typed=False
    )
