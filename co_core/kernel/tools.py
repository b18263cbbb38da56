"""How plugins describe tools to Co, without importing them.

A tool is a function taking ``RunContext[CoDeps]`` first. Plugins register it with a
risk level and a permission-key template; the function itself may be given as a
``"module:attr"`` string so listing tools (``co plugins``) never imports the heavy
modules behind them.

A permission key must name what the call will really touch, not the text the model wrote
(``./secrets/x``, ``src/../secrets/x`` and a symlink to it are one file). A tool whose
arguments can name one target several ways registers a *resolver*:
``resolve(args, deps) -> Resolved`` gives the canonical arguments, which are both what the
policy decides on and what the tool then runs with, and optionally the keys themselves
(one per recipient, a hash of code). It raises :class:`CallRefused` for a call that
cannot be made as asked.
"""

from __future__ import annotations

import importlib
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from co_core.kernel.errors import CoError
from co_core.kernel.visible import key_text

if TYPE_CHECKING:
    from co_core.kernel.deps import CoDeps

Risk = Literal["read", "write", "send", "exec"]
RISKS: tuple[Risk, ...] = ("read", "write", "send", "exec")


class ToolDeclarationError(ValueError):
    """A plugin registered a tool Co cannot use."""


class CallRefused(CoError):
    """A call that cannot be made as asked (a path outside the workspace, no such note):
    nothing runs, and the model is told why so it can call again."""


@dataclass(frozen=True)
class Resolved:
    """What a call will really touch: the arguments the tool runs with, and its permission
    keys when the template cannot say them (empty: the template filled from ``args``)."""

    args: Mapping[str, object]
    keys: tuple[str, ...] = ()


Resolver = Callable[[Mapping[str, object], "CoDeps"], Resolved]


@dataclass(frozen=True)
class ToolSpec:
    """One tool as a plugin declared it."""

    name: str
    target: Callable[..., object] | str
    plugin: str
    risk: Risk | None
    permission: str
    retries: int | None = None
    resolve: Resolver | str | None = None  # or "module:attr", imported on first use

    def load(self) -> Callable[..., object]:
        """The tool function, importing it now if it was declared by path."""
        if callable(self.target):
            return self.target
        function: Callable[..., object] = _load(self.target)
        return function

    def permission_key(self, args: Mapping[str, object]) -> str:
        """Fill the permission template from a call's arguments."""
        return format_permission(self.permission, args)

    def make_call(self, args: Mapping[str, object], deps: CoDeps | None = None) -> ToolCall:
        """The call as the policy sees it: resolved to its real target when the tool has a
        resolver and there are deps to resolve with (else from the arguments as written)."""
        keys: tuple[str, ...] = ()
        if self.resolve is not None and deps is not None:
            resolved = _load(self.resolve)(args, deps)
            args, keys = resolved.args, tuple(resolved.keys)
        keys = tuple(key_text(k) for k in keys) or (self.permission_key(args),)
        return ToolCall(self.name, self.plugin, dict(args), " ".join(keys), self.risk, keys)

    def fingerprint(self) -> str:
        return f"{self.name}|{self.risk}|{self.permission}"


def _load(target: Any) -> Any:
    if callable(target):
        return target
    module_name, _, attr = str(target).partition(":")
    return getattr(importlib.import_module(module_name), attr)


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return ""


def format_permission(template: str, args: Mapping[str, object]) -> str:
    """``"fs:write:{path}"`` + ``{"path": "a.txt"}`` -> ``"fs:write:a.txt"``.

    Missing arguments become empty. A newline, a tab or any other character a reader
    cannot see is written as an escape (``echo $HOME\\ntouch X``; see ``visible``): the
    key is one line and still names exactly one value, and ``key_value`` reads it back.
    """
    return key_text(template.format_map(_Blank({k: str(v) for k, v in args.items()})))


def _template_fields(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


@dataclass
class ToolRegistry:
    """Collects ``register(...)`` calls from the ``register_tools`` hook."""

    plugin: str
    specs: list[ToolSpec] = field(default_factory=list)

    def __call__(
        self,
        function: Callable[..., object] | str,
        *,
        risk: Risk | None = None,
        permission: str | None = None,
        name: str | None = None,
        retries: int | None = None,
        resolve: Resolver | str | None = None,
    ) -> None:
        if isinstance(function, str):
            if ":" not in function:
                raise ToolDeclarationError(
                    f"tool path {function!r} must look like 'module:function'"
                )
            tool_name = name or function.rpartition(":")[2]
        else:
            tool_name = name or function.__name__
        if risk is not None and risk not in RISKS:
            raise ToolDeclarationError(
                f"tool {tool_name!r}: risk must be one of {', '.join(RISKS)}"
            )
        template = permission or f"{self.plugin}:{tool_name}"
        try:
            _template_fields(template)
        except ValueError as exc:
            raise ToolDeclarationError(
                f"tool {tool_name!r}: bad permission template: {exc}"
            ) from exc
        if isinstance(resolve, str) and ":" not in resolve:
            raise ToolDeclarationError(
                f"tool {tool_name!r}: resolver path {resolve!r} must look like 'module:function'"
            )
        self.specs.append(
            ToolSpec(tool_name, function, self.plugin, risk, template, retries, resolve)
        )


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for, as the policy engine sees it.

    ``permission_key`` is what users read; ``keys`` are what rules are matched against
    when a call has several (one per recipient); empty means just ``permission_key``.
    """

    tool: str
    plugin: str
    args: Mapping[str, object]
    permission_key: str
    risk: Risk | None
    keys: tuple[str, ...] = ()

    @property
    def all_keys(self) -> tuple[str, ...]:
        return self.keys or (self.permission_key,)
