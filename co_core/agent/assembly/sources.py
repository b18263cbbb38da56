"""Tool sources that live as long as a session: MCP servers, given by the ``mcp`` layer.

The agent does not know MCP: the ``mcp`` layer registers a resource under
:data:`TOOL_SOURCES` (``register_deps``), so the session's deps build it on first use and
close it when Co exits, whichever way it exits. The conversation asks for it once, while
it prepares: its servers start in the background while the user types, and every turn
after that uses them as they are.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any, Protocol

from co_core.kernel.deps import ResourceKey

if TYPE_CHECKING:
    from co_core.kernel.deps import CoDeps
    from co_core.kernel.tools import ToolSpec


class ToolSources(Protocol):
    """Toolsets from outside the plugins, started once for the session."""

    def toolsets(
        self, specs: MutableMapping[str, ToolSpec], warn: Callable[[str], None]
    ) -> list[Any]:
        """Start (in the background, without waiting) and give their pydantic-ai toolsets;
        each tool joins ``specs`` (so the policy decides it) once its source lists it."""
        ...

    def close(self) -> None:
        """Stop them all; nothing they started is left running."""
        ...


TOOL_SOURCES: ResourceKey[ToolSources] = ResourceKey("core.tool_sources")


def session_toolsets(
    deps: CoDeps, specs: MutableMapping[str, ToolSpec], warn: Callable[[str], None]
) -> list[Any]:
    """The session's tool sources, started now; none when no layer gives any."""
    if TOOL_SOURCES.name not in deps.resources.factories:
        return []
    return deps.resource(TOOL_SOURCES).toolsets(specs, warn)
