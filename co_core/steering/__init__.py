"""Co steering a model too small to steer itself: which tool its words ask for, which
values a call copies from them, when to ask back or decline, and whether its answer says
what the result says.

One entry point, :class:`Steering`, which the agent gets as a resource
(co_core.agent.assembly.steering; this layer's ``plugin.py`` registers it): its
capability (co_core.steering.guide) does the rest, reading only what tools declare
(co_core.steering.contracts), their resolvers' answers and the user's words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from co_core.agent.calls.pipeline import CallPipeline
    from co_core.agent.tools.toolbox import Toolbox


class Steering:
    """The steering of one session (co_core.agent.assembly.steering.Steering)."""

    def capability(self, toolbox: Toolbox, calls: CallPipeline) -> Any:
        from co_core.steering.guide import SmallModelGuide

        return SmallModelGuide(toolbox, calls)
