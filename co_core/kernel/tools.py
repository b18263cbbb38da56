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

A tool also says what it does (``does``: lists, searches, reads, writes, sends, runs) and
what each argument is (``roles``): the thing the call acts on (``target``, what the
resolver reads), text the user gives (``text``; ``content`` when it replaces what is
there and must be given whole), words to look for (``query``), a number that picks an
item (``number``), or how to do it (``option``). Co never guesses those from names; a
tool that declares none gets a reading of its signature and docstring
(:func:`default_roles`, :func:`default_does`), which ``co plugins --json`` shows too.
"""

from __future__ import annotations

import importlib
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from co_core.kernel.errors import CoError
from co_core.kernel.visible import key_text

if TYPE_CHECKING:
    from co_core.kernel.deps import CoDeps

Risk = Literal["read", "write", "send", "exec"]
RISKS: tuple[Risk, ...] = ("read", "write", "send", "exec")
Does = Literal["lists", "searches", "reads", "writes", "sends", "runs"]
DOES: tuple[Does, ...] = ("lists", "searches", "reads", "writes", "sends", "runs")
Role = Literal["target", "text", "content", "query", "number", "option"]
ROLES: tuple[Role, ...] = ("target", "text", "content", "query", "number", "option")
# What a tool that changes something does, by its risk (and the risk a ``does`` needs).
EFFECT_OF: dict[Risk, Does] = {"write": "writes", "send": "sends", "exec": "runs"}
LOOKS: tuple[Does, ...] = ("lists", "searches", "reads")
# The first word of a read-only tool's docstring, when it declares no ``does``.
_LISTING = frozenset("list lists show shows enumerate browse".split())
_SEARCHING = frozenset("search searches find finds look lookup query".split())


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
    does: Does | None = None  # as declared; None: read from risk and docstring
    roles: Mapping[str, Role] | None = None  # as declared; None: read from the signature

    def what_it_does(self, doc: str = "") -> Does:
        """``does`` as declared, else as the risk and the docstring's first word say."""
        return self.does or default_does(self.risk, doc)

    def roles_of(self, params: Sequence[Param], doc: str = "") -> dict[str, Role]:
        """Each argument's role: as declared (an argument not named is an ``option``), else
        read from the parameters (:func:`default_roles`)."""
        if self.roles is not None:
            return {p.name: self.roles.get(p.name, "option") for p in params}
        return default_roles(params, self.permission, self.what_it_does(doc))

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


@dataclass(frozen=True)
class Param:
    """One argument of a tool, as its JSON schema (or signature) gives it: its JSON type
    (``string``, ``integer``, ``number``, ``boolean``, ``array``, ``object``; None when
    unknown) and whether the call must give it."""

    name: str
    kind: str | None
    required: bool


def params_of(schema: Mapping[str, Any] | None) -> list[Param]:
    """The parameters a tool's JSON schema declares (``X | None`` read as ``X``)."""
    schema = schema or {}
    props = schema.get("properties")
    required = set(schema.get("required") or ())
    if not isinstance(props, Mapping):
        return []
    return [Param(str(k), _kind(v), k in required) for k, v in props.items()]


def _kind(schema: Any) -> str | None:
    if not isinstance(schema, Mapping):
        return None
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        return str(kinds[0]) if len(kinds) == 1 else None
    if isinstance(kind, str):
        return kind
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            found = {_kind(o) for o in options} - {"null"}
            return found.pop() if len(found) == 1 else None
    if "enum" in schema or "const" in schema:
        return "string"
    return None


def default_does(risk: Risk | None, doc: str = "") -> Does:
    """What an undeclared tool does: its risk's effect (writes, sends, runs); for a read,
    what its docstring's first word says ("List ..." lists, "Search ..." searches), else
    reads. A tool of undeclared risk counts as one that runs (the riskiest)."""
    if risk is None:
        return "runs"
    if risk != "read":
        return EFFECT_OF[risk]
    first = (doc.strip().split() or [""])[0].lower().strip(".,:")
    if first in _LISTING:
        return "lists"
    if first in _SEARCHING:
        return "searches"
    return "reads"


def default_roles(params: Sequence[Param], permission: str, does: Does) -> dict[str, Role]:
    """Roles read from an undeclared tool's parameters: an argument its permission key
    names is the ``target`` (unless it is the only string of a tool that changes
    something: then it is the user's ``text``, "todo:add:{title}"); a required number
    picks an item (``number``); a required string is the user's ``text`` for a tool that
    writes, sends or runs and the ``query`` for one that searches, else the ``target``
    (once); everything optional, and anything else, is an ``option`` (left at its
    default)."""
    named = set(_template_fields(permission))
    roles: dict[str, Role] = {}
    # A tool that changes something, whose only string the key names ("todo:add:{title}"):
    # that string is the user's text (the todo itself), not only a name to look up.
    strings = [p for p in params if p.required and p.kind == "string"]
    if does in ("writes", "sends", "runs") and len(strings) == 1 and strings[0].name in named:
        named = named - {strings[0].name}
    for param in params:
        if param.name in named and param.kind in ("string", None):
            roles[param.name] = "target"
        elif not param.required:
            roles[param.name] = "option"
        elif param.kind == "integer":
            roles[param.name] = "number"
        elif param.kind != "string":
            roles[param.name] = "option"
        elif does in ("writes", "sends", "runs"):
            roles[param.name] = "text"
        elif does == "searches":
            roles[param.name] = "query"
        elif "target" not in roles.values():
            roles[param.name] = "target"
        else:
            roles[param.name] = "query"
    return roles


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
        does: Does | None = None,
        roles: Mapping[str, Role] | None = None,
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
        _check_does(tool_name, does, risk)
        declared = _check_roles(tool_name, roles)
        self.specs.append(
            ToolSpec(
                tool_name, function, self.plugin, risk, template, retries, resolve, does, declared
            )
        )


def _check_does(tool: str, does: object, risk: Risk | None) -> None:
    if does is None:
        return
    if does not in DOES:
        raise ToolDeclarationError(f"tool {tool!r}: does must be one of {', '.join(DOES)}")
    wanted = "read" if does in LOOKS else next(r for r, d in EFFECT_OF.items() if d == does)
    if risk is not None and risk != wanted:
        raise ToolDeclarationError(
            f"tool {tool!r}: a tool that {does} has risk {wanted!r}, not {risk!r}"
        )


def _check_roles(tool: str, roles: object) -> dict[str, Role] | None:
    if roles is None:
        return None
    if not isinstance(roles, Mapping):
        raise ToolDeclarationError(f"tool {tool!r}: roles must map argument names to roles")
    for name, role in roles.items():
        if not isinstance(name, str) or role not in ROLES:
            raise ToolDeclarationError(
                f"tool {tool!r}: argument {name!r} has role {role!r}; roles are {', '.join(ROLES)}"
            )
    return dict(roles)


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
