"""``@path`` in the user's words: the file, or a folder's listing, put into the message.

A mention is ``@`` at the start of the words or after white space, then a path up to the
next white space (``@"my notes.md"`` when it has spaces); a full stop or comma after it
is not part of it. Only a mention naming something that exists in the workspace counts,
so ``ask @ada`` and ``user@example.com`` stay words. Each is read by the workspace's tool
that reads files (a folder: the one that lists them), chosen by what tools declare
(co_core.agent.tools.kinds), through the call pipeline (co_core.agent.typed): resolved
and decided like any ``read_file`` call, so what the policy denies is refused with the
rule's reason, and then the message is not sent at all (the words meant that file).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from co_core.kernel.errors import CoError

if TYPE_CHECKING:
    from co_core.agent.conversation import Conversation
    from co_core.agent.typed import Done

MENTION = re.compile(r'(?<![^\s(\[{])@(?:"([^"\n]+)"|([^\s"]+))')
TRAILING = ".,;:!?)]}'"


class MentionRefused(CoError):
    """A mentioned file could not be read as asked (the message was not sent)."""


@dataclass(frozen=True)
class Mention:
    written: str  # as in the words, ``@`` included
    path: str


def find(text: str) -> list[Mention]:
    """Every ``@path`` in ``text``, in order, each once (existing or not)."""
    found: dict[str, Mention] = {}
    for match in MENTION.finditer(text):
        quoted, bare = match.group(1), match.group(2)
        path = quoted if quoted is not None else bare.rstrip(TRAILING)
        written = match.group(0) if quoted is not None else "@" + path
        if path and path not in found:
            found[path] = Mention(written, path)
    return list(found.values())


def present(text: str, workspace: os.PathLike[str] | str) -> list[Mention]:
    """The mentions that name something in the workspace (a link counts: the read tool
    decides what it may read)."""
    return [m for m in find(text) if os.path.lexists(os.path.join(workspace, m.path))]


def attach(text: str, read: list[tuple[Mention, str, bool]]) -> str:
    """The words, then each mentioned file's text (``<file path=...>``; ``<folder>``)."""
    blocks = [text]
    for mention, body, folder in read:
        tag = "folder" if folder else "file"
        blocks.append(f'<{tag} path="{mention.path}">\n{body.rstrip()}\n</{tag}>')
    return "\n\n".join(blocks)


async def expand(
    conversation: Conversation, text: str, shown: Callable[[Mention, Done], None] | None = None
) -> str:
    """``text`` with every mentioned file put after it; raises MentionRefused (nothing is
    sent) when one cannot be read as asked."""
    from co_core.agent.typed import call, tool_for

    workspace = conversation.deps.workspace
    mentions = present(text, workspace)
    if not mentions:
        return text
    read: list[tuple[Mention, str, bool]] = []
    for mention in mentions:
        folder = os.path.isdir(os.path.join(workspace, mention.path))
        chosen = tool_for(conversation, "list" if folder else "read")
        done = await call(conversation, chosen, {chosen.argument: mention.path})
        if shown is not None:
            shown(mention, done)
        if not done.ok:
            raise MentionRefused(f"{mention.written}: {done.text}; the message was not sent")
        read.append((mention, done.text, folder))
    return attach(text, read)
