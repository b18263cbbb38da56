"""What tools reach through ``ctx.deps``: settings, the workspace, and lazy named resources.

Plugins register resource factories with the ``register_deps`` hook; a resource (a Docker
sandbox, an API client, a vault index) is built the first time a tool asks for it and
closed when Co exits, whichever way it exits.
"""

from __future__ import annotations

import inspect
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from co_core.changes import ChangeRecord
from co_core.errors import CoError
from co_core.settings import Settings


class ResourceError(CoError):
    """A resource could not be built; the message says which and why."""


@dataclass
class Resources:
    """Builds each registered resource once, on first use, and closes them in reverse order."""

    factories: dict[str, Callable[..., Any]]
    settings: Settings
    _built: dict[str, Any] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, name: str, deps: CoDeps | None = None) -> Any:
        with self._lock:
            if name not in self._built:
                factory = self.factories.get(name)
                if factory is None:
                    known = ", ".join(sorted(self.factories)) or "none"
                    raise ResourceError(f"no resource named {name!r} (registered: {known})")
                wanted = inspect.signature(factory).parameters
                offered = {"settings": self.settings, "deps": deps}
                self._built[name] = factory(**{k: v for k, v in offered.items() if k in wanted})
                self._order.append(name)
            return self._built[name]

    def built(self) -> list[str]:
        return list(self._order)

    def close(self) -> list[str]:
        """Close everything built so far; returns problems instead of raising (we are exiting)."""
        problems = []
        while self._order:
            name = self._order.pop()
            resource = self._built.pop(name)
            closer = getattr(resource, "close", None)
            try:
                if callable(closer):
                    result = closer()
                    if inspect.isawaitable(result):
                        import asyncio

                        asyncio.run(result)  # type: ignore[arg-type]
            except Exception as exc:
                problems.append(f"closing {name}: {type(exc).__name__}: {exc}")
        return problems


@dataclass
class CoDeps:
    """The ``deps`` of every tool call: ``ctx.deps.resource("sandbox")``, ``ctx.deps.settings``."""

    settings: Settings
    resources: Resources
    workspace: Path = field(default_factory=Path.cwd)
    session_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    changes: ChangeRecord | None = None

    def __post_init__(self) -> None:
        if self.changes is None:
            self.changes = ChangeRecord(self.session_id)

    def resource(self, name: str) -> Any:
        return self.resources.get(name, self)

    def section(self, name: str) -> Any:
        return self.settings.section(name)

    def close(self) -> list[str]:
        return self.resources.close()
