"""The plugin host: finds plugins through the ``co`` entry-point group and calls their hooks.

A plugin must never take Co down. One that fails to import, or raises inside a hook, is
named in a single warning line, unregistered, and reported as failed by ``co plugins``;
everything else keeps working. Hooks are therefore called one implementation at a time.
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Literal

import pluggy
from pluggy import HookImpl

from co_core.kernel import hookspecs
from co_core.kernel.errors import print_warning
from co_core.kernel.tools import ToolRegistry, ToolSpec

GROUP = "co"
CORE_PLUGIN = "core"  # how Co's own hook modules are named in messages and ``co status``
Status = Literal["loaded", "failed", "disabled"]


@dataclass
class PluginInfo:
    name: str
    module: str
    distribution: str | None = None
    version: str | None = None
    status: Status = "loaded"
    error: str | None = None
    hooks: list[str] = field(default_factory=list)
    tools: list[ToolSpec] = field(default_factory=list)
    load_ns: tuple[int, int] | None = None  # when its module was imported (for traces)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "module": self.module,
            "distribution": self.distribution,
            "version": self.version,
            "status": self.status,
            "error": self.error,
            "hooks": self.hooks,
            "tools": [t.name for t in self.tools],
            "tool_roles": {t.name: _contract(t) for t in self.tools},
        }


def _contract(spec: ToolSpec) -> dict[str, Any]:
    """What a tool declares of itself, as ``co plugins --json`` shows it: its risk, what it
    does and its arguments' roles (``null``: not declared; Co reads them from the tool's
    signature when it builds the agent, without importing it here)."""
    return {
        "risk": spec.risk,
        "permission": spec.permission,
        "does": spec.what_it_does(),
        "does_declared": spec.does is not None,
        "roles": dict(spec.roles) if spec.roles is not None else None,
    }


class Incompatible(Exception):
    """A plugin written for a newer Co than this one: named and skipped, never a crash."""


UPGRADE = "upgrade co-core (pip install -U co-core)"


def check_version(module: object) -> None:
    """Honour a plugin's ``CO_HOOKSPEC_VERSION = N``: it needs hookspecs of version N or later."""
    wanted = getattr(module, "CO_HOOKSPEC_VERSION", None)
    if wanted is None:
        return
    if not isinstance(wanted, int) or isinstance(wanted, bool) or wanted < 1:
        raise Incompatible(f"CO_HOOKSPEC_VERSION must be a whole number >= 1, not {wanted!r}")
    if wanted > hookspecs.HOOKSPEC_VERSION:
        raise Incompatible(
            f"it needs Co hookspec version {wanted}, this co-core has version "
            f"{hookspecs.HOOKSPEC_VERSION}: {UPGRADE}"
        )


# The form plugin authors are told to write (docs/plugins.md): checked without importing
# packaging, whose import is a quarter of `co --help`'s time.
_LOWER_BOUND = re.compile(r"co[-_.]core\s*>=\s*(\d+(?:\.\d+)*)", re.I)


def check_requirement(dist: Any) -> None:
    """A plugin whose metadata requires another co-core (``co-core>=99``) is skipped clearly.

    pip refuses such installs, but editable installs, ``--no-deps`` and downgrades of
    co-core get past it.
    """
    if dist is None:
        return
    for line in dist.requires or ():
        if not re.match(r"\s*co[-_.]core\b", line, re.I):
            continue
        simple = _LOWER_BOUND.fullmatch(line.strip())
        if simple is not None and _release(_core_version()) >= _release(simple.group(1)):
            continue
        _check_with_packaging(line)


def _release(version: str) -> tuple[int, ...]:
    numbers = re.match(r"\d+(?:\.\d+)*", version)
    found = tuple(int(n) for n in numbers.group(0).split(".")) if numbers else ()
    return found + (0,) * (4 - len(found))


def _check_with_packaging(line: str) -> None:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        requirement = Requirement(line)
    except InvalidRequirement:
        return
    if canonicalize_name(requirement.name) != "co-core":
        return
    if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
        return
    if not requirement.specifier.contains(_core_version(), prereleases=True):
        raise Incompatible(
            f"it requires {line.split(';')[0].strip()}, this is co-core "
            f"{_core_version()}: {UPGRADE}"
        )


@functools.cache
def _core_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("co-core")
    except PackageNotFoundError:
        return "0"


def _newer_hook(exc: pluggy.PluginValidationError) -> str:
    """pluggy's multi-line complaint as one line a plugin's user can act on."""
    text = str(exc)
    hook = re.search(r"hook '(\w+)'", text)
    args = re.search(r"Argument\(s\) \{(.*?)\}", text)
    if hook and args:
        names = ", ".join(sorted(a.strip(" '\"") for a in args.group(1).split(",")))
        problem = f"its {hook.group(1)} hook takes {names}, which this co-core does not offer"
    else:
        problem = text.strip().splitlines()[-1] if text.strip() else "invalid hook"
    return f"{problem} (hookspec version {hookspecs.HOOKSPEC_VERSION}): {UPGRADE}"


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, Incompatible):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass(frozen=True)
class Registered:
    """Something a plugin registered by name (a settings section, a deps factory, a check)."""

    plugin: str
    value: Any
    options: dict[str, Any] = field(default_factory=dict)


def load_filter() -> set[str] | None:
    """``CO_LOAD_PLUGINS=a,b`` loads only those; set but empty loads none; unset loads all."""
    raw = os.environ.get("CO_LOAD_PLUGINS")
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


class PluginHost:
    """Owns the pluggy manager and what is known about each plugin."""

    def __init__(self, *, warn: Callable[[str], None] | None = None) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.plugins: dict[str, PluginInfo] = {}
        self._warn = warn or print_warning
        self._tools: list[ToolSpec] | None = None
        self._core: list[str] = []  # Co's own hook modules, in the order they run

    # -- loading ---------------------------------------------------------------------

    def load_entry_points(self, disabled: Iterable[str] = ()) -> None:
        only = load_filter()
        blocked = set(disabled)
        for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
            if ep.name in self.plugins:
                continue
            info = PluginInfo(ep.name, ep.value, *_distribution(ep))
            self.plugins[ep.name] = info
            if (only is not None and ep.name not in only) or ep.name in blocked:
                info.status = "disabled"
                continue
            try:
                check_requirement(getattr(ep, "dist", None))
                start = time.time_ns()
                module = ep.load()
                info.load_ns = (start, time.time_ns())
                check_version(module)
                self.pm.register(module, name=ep.name)
                _refuse_wrappers(self.pm, ep.name)
            except Incompatible as exc:
                self.fail(ep.name, exc, "is incompatible")
                continue
            except pluggy.PluginValidationError as exc:
                self.fail(ep.name, Incompatible(_newer_hook(exc)), "is incompatible")
                continue
            except Exception as exc:  # a broken plugin is reported, never fatal
                self.fail(ep.name, exc, "failed to load")
                continue
            info.hooks = self._hook_names(ep.name)

    def load_defaults(self, modules: Iterable[str]) -> None:
        """Register Co's own hook modules (``DEFAULT_PLUGINS``), imported by name."""
        import importlib

        for module in modules:
            self.register(importlib.import_module(module), module, listed=False)
            self._core.append(module)

    def register(self, plugin: object, name: str, *, listed: bool = True) -> None:
        """Register an in-process plugin (the core's own hooks, or one under test).

        Raises :class:`Incompatible` for a plugin that needs a newer hookspec version.
        """
        check_version(plugin)
        self.pm.register(plugin, name=name)
        _refuse_wrappers(self.pm, name)
        if listed:
            module = getattr(plugin, "__name__", type(plugin).__name__)
            self.plugins[name] = PluginInfo(name, module, hooks=self._hook_names(name))
        self._tools = None

    def unregister(self, name: str) -> None:
        if self.pm.get_plugin(name) is not None:
            self.pm.unregister(name=name)
        self.plugins.pop(name, None)
        self._tools = None

    def _hook_names(self, name: str) -> list[str]:
        plugin = self.pm.get_plugin(name)
        callers = self.pm.get_hookcallers(plugin) or [] if plugin is not None else []
        return sorted(caller.name for caller in callers)

    def fail(self, name: str, exc: BaseException, doing: str) -> None:
        self._warn(f"plugin {name!r} {doing} and was skipped: {_describe(exc)}")
        info = self.plugins.setdefault(name, PluginInfo(name, "?"))
        info.status, info.error = "failed", _describe(exc)
        if self.pm.get_plugin(name) is not None:
            self.pm.unregister(name=name)
        self._tools = None

    # -- calling ---------------------------------------------------------------------

    def label(self, plugin: str) -> str:
        """The plugin's name for users: Co's own hook modules are all "core"."""
        return CORE_PLUGIN if plugin in self._core else plugin

    def implementations(self, hook_name: str) -> list[HookImpl]:
        """A hook's implementations in the order Co calls them: ``tryfirst`` ones, then
        Co's own, then plugins by name, then ``trylast`` ones."""
        core = {name: index for index, name in enumerate(self._core)}

        def order(impl: HookImpl) -> tuple[int, int, str]:
            when = 0 if impl.tryfirst else 2 if impl.trylast else 1
            return when, core.get(impl.plugin_name, len(core)), impl.plugin_name

        return sorted(getattr(self.pm.hook, hook_name).get_hookimpls(), key=order)

    def call_each(self, hook_name: str, **kwargs: Any) -> list[tuple[str, Any]]:
        """Call every implementation of a hook, isolating failures: [(plugin, result)]."""
        results = []
        for impl in self.implementations(hook_name):
            try:
                result = impl.function(*[kwargs[arg] for arg in impl.argnames])
            except Exception as exc:  # isolate: one plugin's bug is not Co's crash
                self.fail(impl.plugin_name, exc, f"raised in {hook_name}")
                continue
            results.append((self.label(impl.plugin_name), result))
        return results

    def collect(self, hook_name: str, make_register: Callable[[str], Callable[..., Any]]) -> None:
        """Call a ``register``-style hook with a per-plugin register callback."""
        for impl in self.implementations(hook_name):
            try:
                impl.function(*[make_register(impl.plugin_name) for _ in impl.argnames])
            except Exception as exc:
                self.fail(impl.plugin_name, exc, f"raised in {hook_name}")

    # -- what plugins give ---------------------------------------------------------------

    def tools(self) -> list[ToolSpec]:
        """Every tool of every loaded plugin (declarations only; nothing is imported)."""
        if self._tools is None:
            registries: dict[str, ToolRegistry] = {}

            def make(plugin: str) -> ToolRegistry:
                return registries.setdefault(plugin, ToolRegistry(self.label(plugin)))

            self.collect("register_tools", make)
            specs: list[ToolSpec] = []
            seen: dict[str, str] = {}
            for plugin, registry in sorted(registries.items()):
                if plugin not in self._loaded_names():
                    continue  # failed while registering: drop what it half-registered
                for spec in registry.specs:
                    if spec.name in seen:
                        self._warn(
                            f"plugin {plugin!r} tool {spec.name!r} skipped: "
                            f"plugin {seen[spec.name]!r} already has a tool by that name"
                        )
                        continue
                    seen[spec.name] = plugin
                    specs.append(spec)
                if plugin in self.plugins:
                    self.plugins[plugin].tools = [s for s in specs if s.plugin == plugin]
            self._tools = specs
        return self._tools

    def named(self, hook_name: str, kind: str) -> dict[str, Registered]:
        """Collect ``register(name, value, **options)`` calls; the first plugin to claim a name wins."""
        found: dict[str, Registered] = {}

        def make(plugin: str) -> Callable[..., None]:
            def register(name: object, value: Any, **options: Any) -> None:
                name = str(name)  # a ResourceKey registers under its name
                if name in found and found[name].plugin != self.label(plugin):
                    self._warn(
                        f"plugin {plugin!r} {kind} {name!r} skipped: {found[name].plugin!r} has it"
                    )
                    return
                found[name] = Registered(self.label(plugin), value, options)

            return register

        self.collect(hook_name, make)
        loaded = self._loaded_names() | {CORE_PLUGIN}
        return {name: entry for name, entry in found.items() if entry.plugin in loaded}

    def _loaded_names(self) -> set[str]:
        return {name for name, _ in self.pm.list_name_plugin()}

    def listed(self) -> list[PluginInfo]:
        """Plugins for ``co plugins`` (the core's own hooks are not listed)."""
        self.tools()
        return [info for _, info in sorted(self.plugins.items())]


def _distribution(ep: EntryPoint) -> tuple[str | None, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    return dist.metadata["Name"], dist.version


def _refuse_wrappers(pm: pluggy.PluginManager, name: str) -> None:
    """Co calls each implementation on its own (a plugin's bug must not take Co down), so
    pluggy's hook wrappers would silently not wrap: refuse them with one clear line."""
    plugin = pm.get_plugin(name)
    for caller in pm.get_hookcallers(plugin) or []:
        for impl in caller.get_hookimpls():
            if impl.plugin_name == name and (impl.wrapper or impl.hookwrapper):
                pm.unregister(name=name)
                raise Incompatible(
                    f"its {caller.name} hook is a hook wrapper (wrapper=True or "
                    "hookwrapper=True), which Co does not support; use tryfirst/trylast"
                )
