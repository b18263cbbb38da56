"""Bring Co up: read which plugins to load, load them, then validate all settings.

Co's own features plug in like any plugin: ``DEFAULT_PLUGINS`` names the hook module of
each layer, loaded by name, so the kernel imports none of the layers above it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from co_core.kernel import paths, trust
from co_core.kernel.errors import CoError, print_warning
from co_core.kernel.host import PluginHost

if TYPE_CHECKING:
    import typer

    from co_core.kernel.deps import CoDeps
    from co_core.kernel.settings import SectionModel, Settings

DEFAULT_PLUGINS: tuple[str, ...] = (
    "co_core.kernel.plugin",
    "co_core.undo.plugin",
    "co_core.policy.plugin",
    "co_core.mcp.plugin",
    "co_core.sessions.plugin",
    "co_core.telemetry.plugin",
    "co_core.agent.plugin",
    "co_core.steering.plugin",
    "co_core.cli.plugin",
)


def raw_core(key: str, cwd: Path | None = None) -> list[object]:
    """A core key's values as written, strongest first (project, user file, ``CO_<KEY>``).

    Nothing is validated (that needs pydantic): this is for what must be cheap, such as
    which plugins to load or the model named in the ``co chat`` banner. Bad files and
    values are reported when settings are validated.
    """
    files = []
    root = trust.project_root(cwd)
    if root is not None and trust.is_trusted(root):
        files.append(root / ".co" / "settings.json")
    files.append(paths.settings_file())
    found: list[object] = []
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and key in data:
            found.append(data[key])
    env = os.environ.get("CO_" + key.upper(), "")
    if env:
        found.append(env)
    return found


def _raw_disabled(cwd: Path | None) -> list[str]:
    """``disabled_plugins`` from every source, so loading plugins stays cheap."""
    found: list[str] = []
    for value in raw_core("disabled_plugins", cwd):
        if isinstance(value, list):
            found += [str(v) for v in value]
        elif isinstance(value, str):
            found += [p.strip() for p in value.split(",") if p.strip()]
    return found


class CoApp(Protocol):
    """What a plugin's commands and tests may use of Co's app."""

    cwd: Path

    @property
    def settings(self) -> Settings: ...

    def warn(self, message: str) -> None:
        """Tell the user something without stopping (above the prompt in ``co chat``)."""
        ...

    def make_deps(self, workspace: Path | None = None, session_id: str | None = None) -> CoDeps:
        """The ``deps`` tools receive, as in a real run."""
        ...


@dataclass
class App:
    """The plugin host plus settings, built once per command."""

    host: PluginHost
    cwd: Path = field(default_factory=Path.cwd)
    warn: Callable[[str], None] = print_warning
    _settings: Settings | None = None
    _stamps: tuple[object, ...] = ()  # the settings files as they were when last read
    _files: list[Path] | None = None  # where settings come from (``_file_stamps``)

    @property
    def settings(self) -> Settings:
        """Validated on first use; raises SettingsError naming the file and key."""
        if self._settings is None:
            from co_core.kernel.settings import load_settings

            self._stamps = self._file_stamps()  # before reading: an edit meanwhile is seen
            self._settings = load_settings(self.settings_models(), self.cwd)
            for notice in self._settings.notices:
                self.warn(notice)
        return self._settings

    def current_settings(self) -> Settings:
        """The settings as the files say now, validated again only when one of them
        changed since the last read (a few ``stat`` calls otherwise). A change that does
        not validate is said once and the settings Co had stay."""
        settings = self.settings
        stamps = self._file_stamps()
        if stamps == self._stamps:
            return settings
        self._stamps = stamps
        from co_core.kernel.errors import SettingsError
        from co_core.kernel.settings import load_settings

        try:
            self._settings = load_settings(self.settings_models(), self.cwd)
        except SettingsError as exc:
            self.warn(f"{exc}; Co goes on with the settings it had")
        return self._settings or settings

    def _file_stamps(self) -> tuple[object, ...]:
        """Size, time and inode of each file settings come from (None: not there). The
        project folder is looked for once (walking up from ``cwd`` costs more than the
        ``stat`` calls themselves)."""
        if self._files is None:
            root = trust.project_root(self.cwd)
            self._files = [paths.settings_file(), trust.trust_file()]
            if root is not None:
                self._files.append(root / ".co" / "settings.json")
        stamps: list[object] = []
        for path in self._files:
            try:
                found = os.stat(path)
                stamps.append((str(path), found.st_mtime_ns, found.st_size, found.st_ino))
            except OSError:
                stamps.append((str(path), None))
        return tuple(stamps)

    def make_deps(self, workspace: Path | None = None, session_id: str | None = None) -> CoDeps:
        """The deps for a run: settings plus every plugin's lazily built resources."""
        from co_core.kernel.deps import CoDeps, Resources

        factories = {
            name: e.value for name, e in self.host.named("register_deps", "resource").items()
        }
        resources = Resources(factories, self.settings, host=self.host)
        deps = CoDeps(self.settings, resources, workspace or self.cwd)
        deps.reload = self.current_settings
        if session_id:
            deps.session_id = session_id
        return deps

    def settings_models(self) -> dict[str, type[SectionModel]]:
        from co_core.kernel.settings import SectionModel

        models: dict[str, type[SectionModel]] = {}
        for name, entry in self.host.named("register_settings", "settings section").items():
            if name == "core" or not (
                isinstance(entry.value, type) and issubclass(entry.value, SectionModel)
            ):
                self.host.fail(
                    entry.plugin,
                    TypeError(f"section {name!r} is not a pydantic model"),
                    "gave bad settings",
                )
                continue
            models[name] = entry.value
        return models


def load_app(cwd: Path | None = None, *, warn: Callable[[str], None] = print_warning) -> App:
    from co_core.kernel import modelspec
    from co_core.kernel.providers import Providers

    host = PluginHost(warn=warn)
    host.load_defaults(DEFAULT_PLUGINS)
    host.load_entry_points(disabled=_raw_disabled(cwd))
    modelspec.use(Providers.of(host))  # a model string is checked against their prefixes
    return App(host, cwd or Path.cwd(), warn)


def running_app(ctx: typer.Context) -> App:
    """The app of the ``co`` command being run: Co passes it down through Typer's context."""
    app = ctx.find_object(App)
    if app is None:
        raise CoError("no Co app in this command's context (run it through `co`)")
    return app


def current_app(ctx: typer.Context) -> CoApp:
    """The app of the ``co`` command being run, for a plugin's CLI command::

    @app.command("login")
    def login(ctx: typer.Context) -> None:
        settings = co_core.current_app(ctx).settings
    """
    return running_app(ctx)
