"""Shared set-up for the policy tests: a real in-process plugin with tools of every risk."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from co_core import canonical_shell_command, hookimpl
from co_core.kernel import trust
from co_core.kernel.tools import ToolCall
from co_core.policy import PolicyEngine
from co_core.testing import make_app

TOOLS = {
    "read_file": ("read", "fs:read:{path}"),
    "write_file": ("write", "fs:write:{path}"),
    "post_message": ("send", "slack:post:{channel}"),
    "run_shell": ("exec", "shell:exec:{cmd}"),
    "mystery": (None, "mystery:{thing}"),
}


def _noop(**_: Any) -> None:
    """Never run by these tests: only declarations matter to the policy engine."""


class ToolsPlugin:
    """A plugin registered with the real plugin host, declaring tools and opinions."""

    def __init__(self, opinions: dict[str, str] | None = None, tools: dict | None = None) -> None:
        self.opinions = opinions or {}
        self.tools = tools or TOOLS

    @hookimpl
    def register_tools(self, register: Any) -> None:
        for name, (risk, template) in self.tools.items():
            register(_noop, risk=risk, permission=template, name=name)

    @hookimpl
    def approval_policy(self, call: ToolCall, settings: Any) -> str | None:
        return self.opinions.get(call.tool)


class OpinionPlugin:
    """Another plugin with opinions about tools that are not its own."""

    def __init__(self, opinions: dict[str, str]) -> None:
        self.opinions = opinions

    @hookimpl
    def approval_policy(self, call: ToolCall, settings: Any) -> str | None:
        return self.opinions.get(call.tool)


def build_app(
    project: Path,
    *,
    user_rules: list[dict] | None = None,
    project_rules: list[dict] | None = None,
    trusted: bool = True,
    opinions: dict[str, str] | None = None,
    other_opinions: dict[str, str] | None = None,
    tools: dict | None = None,
    presets: list[str] | None = None,
) -> Any:
    settings: dict[str, Any] = {}
    if user_rules is not None:
        settings["policy"] = {"rules": user_rules}
    if presets is not None:
        settings.setdefault("policy", {})["presets"] = presets
    if project_rules is not None:
        (project / ".co").mkdir(exist_ok=True)
        (project / ".co" / "policy.json").write_text(json.dumps({"rules": project_rules}))
        if trusted:
            trust.trust(project)
    # Only the test plugin's tools: installed plugins may declare tools with the same names.
    saved = os.environ.get("CO_LOAD_PLUGINS")
    os.environ["CO_LOAD_PLUGINS"] = ""
    try:
        app = make_app(settings, cwd=project)
    finally:
        if saved is None:
            os.environ.pop("CO_LOAD_PLUGINS", None)
        else:
            os.environ["CO_LOAD_PLUGINS"] = saved
    app.host.register(ToolsPlugin(opinions, tools), "fake")
    if other_opinions:
        app.host.register(OpinionPlugin(other_opinions), "other")
    return app


def engine_for(project: Path, **options: Any) -> PolicyEngine:
    engine_opts = {
        k: options.pop(k)
        for k in ("approve", "yolo", "headless", "session_id", "audit")
        if k in options
    }
    app = build_app(project, **options)
    engine_opts.setdefault("audit", False)
    return PolicyEngine.from_app(app, workspace=project, **engine_opts)


def call(engine: PolicyEngine, tool: str, **args: Any) -> ToolCall:
    """The call as Co decides it. ``run_shell`` spells its command as co-shell's resolver
    does (``canonical_shell_command``): the text a shell tool runs is the one decided."""
    spec = engine.specs[tool]
    if spec.permission.startswith("shell:exec:") and isinstance(args.get("cmd"), str):
        args = {**args, "cmd": canonical_shell_command(args["cmd"])}
    return ToolCall(tool, spec.plugin, args, spec.permission_key(args), spec.risk)
