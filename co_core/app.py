"""Bring Co up: read which plugins to load, load them, then validate all settings."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_core import paths, trust
from co_core.plugins import CORE_PLUGIN, PluginHost

if TYPE_CHECKING:
    from co_core.deps import CoDeps
    from co_core.settings import Settings


def raw_core(key: str, cwd: Path | None = None) -> list[Any]:
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
    found: list[Any] = []
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


def stderr_warning(message: str) -> None:
    print(f"co: warning: {message}", file=sys.stderr)


@dataclass
class App:
    """The plugin host plus settings, built once per command."""

    host: PluginHost
    cwd: Path = field(default_factory=Path.cwd)
    warn: Callable[[str], None] = stderr_warning
    _settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        """Validated on first use; raises SettingsError naming the file and key."""
        if self._settings is None:
            from co_core.settings import load_settings

            self._settings = load_settings(self.settings_models(), self.cwd)
            for notice in self._settings.notices:
                self.warn(notice)
        return self._settings

    def make_deps(self, workspace: Path | None = None, session_id: str | None = None) -> CoDeps:
        """The deps for a run: settings plus every plugin's lazily built resources."""
        from co_core.deps import CoDeps, Resources

        factories = {
            name: e.value for name, e in self.host.named("register_deps", "resource").items()
        }
        deps = CoDeps(self.settings, Resources(factories, self.settings), workspace or self.cwd)
        if session_id:
            deps.session_id = session_id
        return deps

    def settings_models(self) -> dict[str, Any]:
        from pydantic import BaseModel

        models = {}
        for name, entry in self.host.named("register_settings", "settings section").items():
            if name == "core" or not (
                isinstance(entry.value, type) and issubclass(entry.value, BaseModel)
            ):
                self.host.fail(
                    entry.plugin,
                    TypeError(f"section {name!r} is not a pydantic model"),
                    "gave bad settings",
                )
                continue
            models[name] = entry.value
        return models


def load_app(cwd: Path | None = None, *, warn: Callable[[str], None] = stderr_warning) -> App:
    from co_core import builtin

    host = PluginHost(warn=warn)
    host.register(builtin, CORE_PLUGIN, listed=False)
    host.load_entry_points(disabled=_raw_disabled(cwd))
    return App(host, cwd or Path.cwd(), warn)
