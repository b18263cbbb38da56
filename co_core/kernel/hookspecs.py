"""The hooks a Co plugin can implement, and the typed callbacks they receive.

Every hook takes keyword arguments; an implementation may accept fewer than the spec
offers (pluggy passes only the ones it names), which is how plugins written against an
older version of this file keep loading. Hooks that register things receive a
``register`` callback (typed by the Protocols below), so a plugin can import its heavy
modules inside the hook body and Co's start-up stays fast.

Implementations run in plugin-name order, the core's own first. ``@hookimpl(tryfirst=True)``
runs before the others and ``trylast=True`` after them; hook wrappers
(``wrapper=True``, ``hookwrapper=True``) are refused with one warning, because Co calls
each implementation on its own so that one plugin's exception cannot take Co down.

``HOOKSPEC_VERSION`` increases whenever a hook gains a parameter or a hook is added;
docs/plugins.md lists what changed in each version. A plugin's hook module may declare
``CO_HOOKSPEC_VERSION = N``: on a Co with an older version it is skipped with one clear
line instead of failing later.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

import pluggy

if TYPE_CHECKING:
    from decimal import Decimal

    import typer

    from co_core.kernel.deps import CoDeps, ResourceKey
    from co_core.kernel.providers import ModelRequest
    from co_core.kernel.settings import SectionModel, Settings
    from co_core.kernel.status import CheckResult
    from co_core.kernel.tools import Does, Resolver, Risk, Role, ToolCall

PROJECT = "co"
# 2: prompt_markers; 3: register_tools(resolve=), typed resource keys; 4: plugin_ready;
# 5: register_tools(does=, roles=), register_models
HOOKSPEC_VERSION = 5

Effect = Literal["allow", "deny", "ask"]
T = TypeVar("T")
"""A plugin's opinion on one tool call (``approval_policy``)."""

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class ToolRegister(Protocol):
    """``register(function_or_"module:attr", risk=..., permission=..., resolve=...,
    does=..., roles={argument: role})``."""

    def __call__(
        self,
        function: Callable[..., object] | str,
        *,
        risk: Risk | None = None,
        permission: str | None = None,
        name: str | None = None,
        retries: int | None = None,
        resolve: Resolver | str | None = None,
        does: Does | None = None,
        roles: Mapping[str, Role] | None = None,
    ) -> None: ...


class ModelRegister(Protocol):
    """``register("prefix", build, status=..., counter=..., price=..., free=..., example=...)``;
    ``build(request)`` gets a ``co_core.ModelRequest`` (co_core.kernel.providers)."""

    def __call__(
        self,
        prefix: str,
        build: Callable[[ModelRequest], object],
        *,
        status: Callable[[str, Settings], CheckResult] | None = None,
        counter: Callable[[object], object] | None = None,
        price: Callable[[object, str], Decimal | None] | None = None,
        free: bool = False,
        example: str = "",
        needs_name: bool = True,
        form: Callable[[str], str | None] | None = None,
    ) -> None: ...


class ResourceRegister(Protocol):
    """``register(KEY, factory)``: ``factory(settings=..., deps=...)`` builds it on first use."""

    def __call__(self, key: ResourceKey[T] | str, factory: Callable[..., T]) -> None: ...


class SettingsRegister(Protocol):
    """``register("section", PydanticModel)``."""

    def __call__(self, name: str, model: type[SectionModel]) -> None: ...


class StatusCheckRegister(Protocol):
    """``register("name", check, timeout=3.0)``; ``check(settings=..., host=...)``."""

    def __call__(
        self, name: str, check: Callable[..., CheckResult], *, timeout: float = ...
    ) -> None: ...


SlashHandler = Callable[[str, "CoDeps"], "str | None | Awaitable[str | None]"]


class SlashCommandRegister(Protocol):
    """``register("name", handler, help="...")``; ``handler(arg, deps)`` returns text."""

    def __call__(self, name: str, handler: SlashHandler, *, help: str = "") -> None: ...


@hookspec
def register_tools(register: ToolRegister) -> None:
    """Give Co tools: ``register(fn_or_"module:attr", risk=..., permission=...)``."""


@hookspec
def register_models(register: ModelRegister) -> None:
    """Give Co model providers: ``register(prefix, build, status=..., price=...)``."""


@hookspec
def register_deps(register: ResourceRegister) -> None:
    """Give Co named resources built on first use: ``register(KEY, factory)``."""


@hookspec
def register_settings(register: SettingsRegister) -> None:
    """Give Co a settings section: ``register(section_name, PydanticModel)``."""


@hookspec
def register_status_checks(register: StatusCheckRegister) -> None:
    """Give ``co status`` health checks: ``register(name, check)``."""


@hookspec
def register_commands(app: typer.Typer) -> None:
    """Add CLI commands to the ``co`` Typer app."""


@hookspec
def register_slash_commands(register: SlashCommandRegister) -> None:
    """Add REPL slash commands: ``register(name, handler, help)``."""


@hookspec
def approval_policy(call: ToolCall, settings: Settings) -> Effect | None:
    """Give an opinion on one tool call: "allow", "deny", "ask" or None (no opinion)."""


@hookspec
def system_instructions(settings: Settings) -> str | None:
    """Return text appended to the agent's system prompt, or None."""


@hookspec
def prompt_markers(settings: Settings) -> str | None:
    """Return a short warning shown in ``co chat``'s prompt line (e.g. "no-sandbox"), or None."""


@hookspec
def plugin_ready(settings: Settings) -> str | Mapping[str, str] | None:
    """Say whether the plugin's tools can work now: None, or one line on how to set it up
    (or, when only some tools need what is missing, a mapping from their names to the line)."""
