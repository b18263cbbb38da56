"""The ``mcp_servers`` and ``mcp`` settings sections, and which servers may start here.

``mcp_servers`` maps a server name to how to reach it: a stdio command or a
streamable-HTTP URL. Servers named in a project's ``.co/settings.json`` count only when
the folder is trusted (``co trust``); the settings loader already drops untrusted project
files, and :func:`declared_servers` says which servers were left out and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from co_core.kernel.settings import SectionModel, setting

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
NAME_RULE = "letters, digits, '-' and '_' (at most 32, starting with a letter or digit)"


class McpServer(BaseModel):
    """One MCP server: ``command`` (+ ``args``, ``env``, ``cwd``) or ``url`` (+ ``headers``)."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(None, description="program to start (stdio transport)")
    args: list[str] = Field(default_factory=list, description="its arguments")
    env: dict[str, str] = Field(
        default_factory=dict, description="extra environment (Co's own is not passed on)"
    )
    cwd: str | None = Field(None, description="working folder for the program")
    url: str | None = Field(None, description="streamable-HTTP endpoint, e.g. http://host/mcp")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers (url only)")
    enabled: bool = Field(True, description="false keeps the entry but never starts it")
    timeout: float | None = Field(
        None, gt=0, description="seconds to start and list its tools (default: mcp.startup_timeout)"
    )
    call_timeout: float | None = Field(
        None, gt=0, description="seconds one tool call may take (default: mcp.call_timeout)"
    )

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(cls.model_fields))
            if unknown:
                known = ", ".join(cls.model_fields)
                raise ValueError(f"unknown key {unknown[0]!r} (a server takes: {known})")
        return data

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if bool(self.command) == bool(self.url):
            raise ValueError("give either 'command' (stdio) or 'url' (streamable HTTP), not both")
        if self.url:
            if not self.url.startswith(("http://", "https://")):
                raise ValueError(f"url must start with http:// or https:// (got {self.url!r})")
            if self.args or self.env or self.cwd:
                raise ValueError("'args', 'env' and 'cwd' only apply to a 'command' server")
        if self.command and self.headers:
            raise ValueError("'headers' only apply to a 'url' server")
        return self

    def describe(self) -> str:
        """One line for listings; header values are never shown (they hold tokens)."""
        if self.url:
            names = f" (headers: {', '.join(sorted(self.headers))})" if self.headers else ""
            return f"{self.url}{names}"
        import shlex

        return shlex.join([self.command or "", *self.args])


def _check_name(name: str) -> str:
    if not NAME.match(name):
        raise ValueError(f"bad server name: use {NAME_RULE}")
    return name


class McpServersSettings(SectionModel):
    """``{"mcp_servers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}``."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)
    __pydantic_extra__: dict[Annotated[str, AfterValidator(_check_name)], McpServer] = Field(
        init=False
    )

    def servers(self) -> dict[str, McpServer]:
        return dict(self.__pydantic_extra__ or {})


class McpSettings(SectionModel):
    trust_annotations: bool = setting(
        False,
        env="CO_MCP_TRUST_ANNOTATIONS",
        help="let a server's readOnlyHint make its tools read-risk (allowed by default)",
    )
    startup_timeout: float = setting(
        30.0,
        gt=0,
        env="CO_MCP_STARTUP_TIMEOUT",
        help="seconds a server has to start and list its tools (a server's own `timeout` wins)",
    )
    call_timeout: float = setting(
        60.0,
        gt=0,
        env="CO_MCP_CALL_TIMEOUT",
        help="seconds one MCP tool call may take (a server's own `call_timeout` wins)",
    )


@dataclass(frozen=True)
class Limits:
    """How long one server has to start, and each of its calls to answer."""

    startup: float
    call: float


def limits(server: McpServer, settings: Any) -> Limits:
    """A server's own ``timeout``/``call_timeout``, else the ``mcp`` section's."""
    options = settings.sections.get("mcp") if settings is not None else None
    startup = float(options.startup_timeout) if options is not None else 30.0
    call = float(options.call_timeout) if options is not None else 60.0
    return Limits(server.timeout or startup, server.call_timeout or call)


@dataclass(frozen=True)
class Declared:
    """A server as configured, with where it was declared and whether it may start."""

    name: str
    server: McpServer
    source: str  # "user" or "project"
    path: Path | None
    skipped: str | None = None  # why it will not start (disabled, untrusted project)


def declared_servers(settings: Any, cwd: Path | None = None) -> list[Declared]:
    """Every server Co knows about here, including the ones an untrusted project declares."""
    from co_core.kernel import trust
    from co_core.kernel.settings import load_layers, read_json

    section = settings.sections.get("mcp_servers") if settings is not None else None
    servers = section.servers() if section is not None else {}
    layers, _, _ = load_layers(cwd)
    origin: dict[str, tuple[str, Path | None]] = {}
    for layer in reversed(layers):  # weakest first, so the strongest layer names the source
        declared = layer.data.get("mcp_servers")
        for name in declared if isinstance(declared, dict) else {}:
            origin[name] = ("project" if layer.label == "project" else "user", layer.path)
    out = []
    for name, server in sorted(servers.items()):
        source, path = origin.get(name, ("user", None))
        out.append(Declared(name, server, source, path, None if server.enabled else "disabled"))
    root = trust.project_root(cwd)
    if root is not None and not trust.is_trusted(root):
        project_file = root / ".co" / "settings.json"
        try:
            raw = read_json(project_file).get("mcp_servers", {})
        except Exception:
            raw = {}
        for name, value in sorted((raw or {}).items() if isinstance(raw, dict) else []):
            try:
                server = McpServer.model_validate(value)
            except Exception:
                continue
            why = f"declared by untrusted project {root} (run `co trust {root}` to allow it)"
            out.append(Declared(name, server, "project", project_file, why))
    return out
