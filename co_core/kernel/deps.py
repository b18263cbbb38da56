"""What tools reach through ``ctx.deps``: settings, the workspace, and lazy resources.

Plugins register resource factories with the ``register_deps`` hook under a typed
:class:`ResourceKey`; a resource (a Docker sandbox, an API client, a vault index) is built
the first time a tool asks for it and closed when Co exits, whichever way it exits. The
change record behind ``/undo`` is such a resource too, given by Co's ``undo`` layer.
"""

from __future__ import annotations

import inspect
import threading
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, overload

from co_core.kernel.errors import CoError, print_warning

if TYPE_CHECKING:
    from co_core.kernel.settings import SectionModel, Settings

T = TypeVar("T")
S = TypeVar("S", bound="SectionModel")


@dataclass(frozen=True)
class ResourceKey(Generic[T]):
    """A resource's name, carrying the type ``ctx.deps.resource(KEY)`` returns.

    Names are global: start them with your plugin's name (``"shell.sandbox"``).
    """

    name: str

    def __str__(self) -> str:
        return self.name


class ResourceError(CoError):
    """A resource could not be built; the message says which and why."""


class FileChanges(Protocol):
    """The change record behind ``/undo``: tools that write files tell it first."""

    def before_write(self, path: Path, *, source: str = "tool") -> None:
        """Remember how ``path`` looks now, before a tool changes it."""

    def watch(self, root: Path) -> AbstractContextManager[None]:
        """Record whatever changes under ``root`` inside the ``with`` block (shell commands)."""

    def next_turn(self, note: str = "") -> int:
        """Start a new user turn (Co calls this)."""


CHANGES: ResourceKey[FileChanges] = ResourceKey("core.changes")


class ReadPolicy(Protocol):
    """The user's rules, as a search asks them: may this be read without asking?"""

    def allows(self, key: str) -> bool: ...


# The user's rules for deps built outside a conversation (given by Co's ``policy`` layer).
POLICY: ResourceKey[ReadPolicy] = ResourceKey("core.policy")


class NoPolicy(CoError):
    """Deps that no policy decides for: policy-filtered reads are refused, never allowed."""


@dataclass
class Resources:
    """Builds each registered resource once, on first use, and closes them in reverse order."""

    factories: dict[str, Callable[..., object]]
    settings: Settings
    _built: dict[str, object] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    host: object = None  # the plugin host, for factories that name ``host``

    def get(self, name: str, deps: CoDeps | None = None) -> object:
        with self._lock:
            if name not in self._built:
                factory = self.factories.get(name)
                if factory is None:
                    known = ", ".join(sorted(self.factories)) or "none"
                    raise ResourceError(f"no resource named {name!r} (registered: {known})")
                wanted = inspect.signature(factory).parameters
                offered = {"settings": self.settings, "deps": deps, "host": self.host}
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
    """The ``deps`` of every tool call: ``ctx.deps.resource(KEY)``, ``ctx.deps.section(Model)``."""

    settings: Settings
    resources: Resources
    workspace: Path = field(default_factory=Path.cwd)
    session_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    # the policy's answer for a permission key, without asking (set by Co's conversation;
    # else the user's rules, when Co's policy layer is loaded; else every such read refused)
    policy: Callable[[str], bool] | None = field(default=None, repr=False)
    # goes up whenever the rules behind ``policy`` change (a session grant): what keeps
    # the policy's answers (a search's filter) keeps them for one version; None where
    # nobody says when the rules change (then nothing may keep an answer)
    policy_version: Callable[[], int] | None = field(default=None, repr=False)
    # tell the user something that does not stop the call (above the prompt in co chat)
    warn: Callable[[str], None] = field(default=print_warning, repr=False)
    # the settings as the files say now (set by Co's app): ``section`` reads through it,
    # so a setting changed with ``co config set`` applies from a tool's next call
    reload: Callable[[], Settings] | None = field(default=None, repr=False)

    @overload
    def resource(self, key: ResourceKey[T]) -> T: ...
    @overload
    def resource(self, key: str) -> Any: ...
    def resource(self, key: ResourceKey[Any] | str) -> Any:
        return self.resources.get(str(key), self)

    @overload
    def section(self, model: type[S]) -> S: ...
    @overload
    def section(self, model: str) -> Any: ...
    def section(self, model: type[S] | str) -> Any:
        if self.reload is not None:
            self.settings = self.resources.settings = self.reload()
        return self.settings.section(model)

    def allows(self, key: str) -> bool:
        """Would the user's rules let a read with this permission key happen without
        asking? A search leaves out what they keep from being read (``obsidian:read:...``).
        Give the key with its value as it is (``f"fs:read:{path}"``): Co writes its unseen
        characters out as in every key.

        Raises :class:`NoPolicy` when no policy decides for these deps: nothing is let
        through by default."""
        if self.policy is None:
            if POLICY.name not in self.resources.factories:
                raise NoPolicy(
                    f"nothing decides whether {key!r} may be read (deps made without Co's "
                    "policy): the read is refused; make deps with app.make_deps()"
                )
            self.policy = self.resource(POLICY).allows
        return self.policy(key)

    @property
    def changes(self) -> FileChanges:
        """The change record of this session (``/undo``)."""
        return self.resource(CHANGES)

    def close(self) -> list[str]:
        return self.resources.close()
