"""Small-model steering, given by the ``steering`` layer: the agent names it, never imports it.

Steering (co_core.steering) decides for a model too small to decide itself: which tool,
which values, when to ask back. The agent does not know it: the ``steering`` layer
registers a resource under :data:`STEERING` (``register_deps``), and the conversation
asks for it once, when it builds the agent. Without it (the layer left out of
``DEFAULT_PLUGINS``), small models still get their constrained calls and short prompt
(co_core.agent.local.constrained), and answer on their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from co_core.kernel.deps import ResourceKey

if TYPE_CHECKING:
    from co_core.agent.calls.pipeline import CallPipeline
    from co_core.agent.tools.toolbox import Toolbox
    from co_core.kernel.deps import CoDeps


class Steering(Protocol):
    """What steering gives the agent: one capability, made for the session's toolbox and
    call pipeline (it sits where the policy gate's verdicts reach it)."""

    def capability(self, toolbox: Toolbox, calls: CallPipeline) -> Any:
        """A pydantic-ai capability (``AbstractCapability[CoDeps]``)."""
        ...


STEERING: ResourceKey[Steering] = ResourceKey("core.steering")


def session_steering(deps: CoDeps) -> Steering | None:
    """The session's steering; None when no layer gives one."""
    if STEERING.name not in deps.resources.factories:
        return None
    return deps.resource(STEERING)
