"""What a session takes from the user's and the project's own files, besides settings: the
briefing for the model (instruction files, memory) and the user's hooks, made once when
the conversation is prepared and written to the audit trail, so a session's record says
what its model was told and what ran on the machine."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_core.agent.briefing import Briefing
from co_core.agent.user_hooks import Hooks, collect
from co_core.kernel.errors import CoError

if TYPE_CHECKING:
    from co_core.agent.calls.pipeline import CallPipeline
    from co_core.agent.frontend import Frontend
    from co_core.policy.engine import PolicyEngine


class PromptDenied(CoError):
    """A ``prompt`` hook kept the user's words from the model (the message says which)."""


@dataclass
class SessionFiles:
    briefing: Briefing
    hooks: Hooks

    @classmethod
    def open(
        cls,
        cwd: Path,
        settings: Any,
        engine: PolicyEngine,
        pipeline: CallPipeline,
        frontend: Frontend,
        session_id: str,
    ) -> SessionFiles:
        briefing = Briefing.read(cwd, settings)
        for notice in briefing.notices():
            frontend.warn(notice)
        hooks = Hooks(
            collect(cwd),
            cwd,
            session_id,
            frontend.warn,
            engine.audit,
            engine.prefixes,
        )
        pipeline.reviewers.append(hooks)
        audit = engine.audit
        if audit is not None and (briefing.instructions.files or briefing.memory.files):
            audit.write(
                "instructions",
                {
                    "files": [str(f.path) for f in briefing.instructions.files],
                    "memory": [str(f.path) for f in briefing.memory.files],
                    "hooks": [f"{h.event}: {h.command}" for h in hooks.hooks],
                },
            )
        return cls(briefing, hooks)

    def started(self, model: str, source: str) -> None:
        """``session_start`` hooks, run once (from the thread that prepares the session);
        what they add is told to the model with the briefing."""
        if not self.hooks.of("session_start"):
            return
        self.briefing.added = asyncio.run(self.hooks.session_started(model, source))

    async def prompted(self, prompt: str) -> str:
        """The words as the model gets them (``prompt`` hooks' context added); raises
        PromptDenied when a hook keeps them from the model."""
        if not self.hooks.of("prompt"):
            return prompt
        text, denied = await self.hooks.prompted(prompt)
        if denied is not None:
            raise PromptDenied(f"not sent to the model: {denied}")
        return text

    async def ended(self, status: str, output: str, calls: int) -> None:
        if self.hooks.of("turn_end"):
            await self.hooks.turn_ended(status, output, calls)
