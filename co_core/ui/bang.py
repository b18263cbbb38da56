"""``!cmd`` at the ``co chat`` prompt: the user runs a shell command himself.

It runs with the workspace's tool that runs shell commands (chosen by what it declares,
co_core.agent.tools.kinds), in its sandbox, through the call pipeline
(co_core.agent.typed): not asked about, since the user typed it, but a rule that denies
it still does, with its reason. The output is shown whole, and the command and its
output join the conversation, so the next question can be about them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from co_core.agent.conversation import Conversation
    from co_core.agent.typed import Done

NOTE = "I ran a command myself (`!` at the prompt), in the sandbox:\n$ {command}\n{output}"
NOT_RUN = "I tried to run a command myself (`!` at the prompt): $ {command}\nIt was not run: {why}"
KEPT = 16 * 1024  # characters of output the conversation keeps


async def run(conversation: Conversation, command: str) -> Done:
    """Run ``command``; its note is added to the conversation (run or not)."""
    from co_core.agent.typed import call, tool_for

    chosen = tool_for(conversation, "run")
    done = await call(conversation, chosen, {chosen.argument: command})
    output = done.text if len(done.text) <= KEPT else done.text[:KEPT] + "\n[… cut]"
    if done.ran:
        conversation.add_note(NOTE.format(command=command, output=output))
    else:
        conversation.add_note(NOT_RUN.format(command=command, why=output))
    return done
