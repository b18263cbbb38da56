"""Which plugins can work now (the ``plugin_ready`` hook), and what to tell the user if not.

A plugin that is not ready (Google not signed in, no Slack token, no vault, no sandbox)
keeps its tools out of the model's reach; its one line goes into the system prompt, into
``co status`` and into ``/tools``, so "check my email" is answered with how to set it up.
A plugin may also name only some of its tools (co-shell's commands need a sandbox, its
file tools do not).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from co_core.kernel.host import PluginHost
    from co_core.kernel.settings import Settings
    from co_core.kernel.tools import ToolSpec


def _one_line(text: str) -> str:
    """On one line, cut at a word when long."""
    import textwrap

    return textwrap.shorten(text, 300, placeholder=" …")


@dataclass(frozen=True)
class Readiness:
    """What is not ready: whole plugins (``plugins``) and single tools (``tools``), each
    with the line that says how to set it up."""

    plugins: dict[str, str] = field(default_factory=dict)
    tools: dict[str, tuple[str, str]] = field(default_factory=dict)  # tool -> (plugin, line)

    def why(self, plugin: str, tool: str | None = None) -> str | None:
        """The line saying why ``tool`` (or the whole ``plugin``) cannot work, or None."""
        if plugin in self.plugins:
            return self.plugins[plugin]
        if tool is not None and tool in self.tools and self.tools[tool][0] == plugin:
            return self.tools[tool][1]
        return None

    def blocks(self, spec: ToolSpec) -> str | None:
        return self.why(spec.plugin, spec.name)

    def lines(self) -> list[str]:
        """One line per plugin (or group of its tools) that is not ready."""
        out = [f"- {plugin}: {line}" for plugin, line in sorted(self.plugins.items())]
        grouped: dict[tuple[str, str], list[str]] = {}
        for tool, (plugin, line) in self.tools.items():
            if plugin not in self.plugins:
                grouped.setdefault((plugin, line), []).append(tool)
        for (plugin, line), tools in sorted(grouped.items()):
            out.append(f"- {plugin} ({', '.join(sorted(tools))}): {line}")
        return out

    def __bool__(self) -> bool:
        return bool(self.plugins or self.tools)


def readiness(host: PluginHost, settings: Settings) -> Readiness:
    """Ask every plugin; a plugin whose hook raises is reported and skipped by the host."""
    plugins: dict[str, str] = {}
    tools: dict[str, tuple[str, str]] = {}
    for plugin, answer in host.call_each("plugin_ready", settings=settings):
        if isinstance(answer, str) and answer.strip():
            plugins[plugin] = _one_line(answer)
        elif isinstance(answer, Mapping):
            for tool, line in answer.items():
                if isinstance(line, str) and line.strip():
                    tools[str(tool)] = (plugin, _one_line(line))
    return Readiness(plugins, tools)
