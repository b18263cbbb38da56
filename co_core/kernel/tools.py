"""How plugins describe tools to Co, without importing them.

A tool is a function taking ``RunContext[CoDeps]`` first. Plugins register it with a
risk level and a permission-key template; the function itself may be given as a
``"module:attr"`` string so listing tools (``co plugins``) never imports the heavy
modules behind them.
"""

from __future__ import annotations

import importlib
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Risk = Literal["read", "write", "send", "exec"]
RISKS: tuple[Risk, ...] = ("read", "write", "send", "exec")


class ToolDeclarationError(ValueError):
    """A plugin registered a tool Co cannot use."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool as a plugin declared it."""

    name: str
    target: Callable[..., Any] | str
    plugin: str
    risk: Risk | None
    permission: str
    retries: int | None = None

    def load(self) -> Callable[..., Any]:
        """The tool function, importing it now if it was declared by path."""
        if callable(self.target):
            return self.target
        module_name, _, attr = self.target.partition(":")
        function: Callable[..., Any] = getattr(importlib.import_module(module_name), attr)
        return function

    def permission_key(self, args: Mapping[str, Any]) -> str:
        """Fill the permission template from a call's arguments."""
        return format_permission(self.permission, args)

    def fingerprint(self) -> str:
        return f"{self.name}|{self.risk}|{self.permission}"


class _Blank(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return ""


def format_permission(template: str, args: Mapping[str, Any], *, flatten: bool = True) -> str:
    """``"fs:write:{path}"`` + ``{"path": "a.txt"}`` -> ``"fs:write:a.txt"``.

    Missing arguments become empty; newlines are flattened so one key is one line, unless
    ``flatten`` is False (the policy must see a shell command exactly as it will run).
    """
    if flatten:
        args = {k: " ".join(str(v).split("\n")) for k, v in args.items()}
    return template.format_map(_Blank({k: str(v) for k, v in args.items()}))


def _template_fields(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


@dataclass
class ToolRegistry:
    """Collects ``register(...)`` calls from the ``register_tools`` hook."""

    plugin: str
    specs: list[ToolSpec] = field(default_factory=list)

    def __call__(
        self,
        function: Callable[..., Any] | str,
        *,
        risk: Risk | None = None,
        permission: str | None = None,
        name: str | None = None,
        retries: int | None = None,
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
        self.specs.append(ToolSpec(tool_name, function, self.plugin, risk, template, retries))


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for, as the policy engine sees it."""

    tool: str
    plugin: str
    args: Mapping[str, Any]
    permission_key: str
    risk: Risk | None
