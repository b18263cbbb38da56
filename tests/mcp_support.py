"""Shared set-up for the MCP tests: real MCP servers, Co's real conversation, a scripted model.

``run_turn`` runs one turn of Co's own agent (policy gate, audit, MCP toolsets) whose
model makes the given calls one after another; a scripted "user" answers prompts.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo

from co_core.agent.conversation import Conversation
from co_core.agent.frontend import Answer, NoTerminal
from co_core.agent.models import ResolvedModel
from co_core.testing import make_app, scripted_model

SERVER = str(Path(__file__).with_name("mcp_test_server.py"))


def sdk_server(**options: Any) -> dict[str, Any]:
    """The settings entry for the SDK-built test server."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [SERVER]}
    entry.update(options)
    return entry


@contextmanager
def http_server(token: str) -> Iterator[str]:
    """The SDK-built test server over streamable HTTP, answering only ``Bearer <token>``;
    yields its URL once it accepts connections, and stops it after."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "MCP_TOKEN": token}
    process = subprocess.Popen([sys.executable, SERVER, "--http", str(port)], env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


def time_server() -> dict[str, Any]:
    """The published reference server ``mcp-server-time`` (installed from PyPI)."""
    return {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}


def app_with(
    servers: dict[str, Any], *, cwd: Path, rules: list[dict] | None = None, **mcp: Any
) -> Any:
    settings: dict[str, Any] = {"mcp_servers": servers}
    if rules is not None:
        settings["policy"] = {"rules": rules}
    if mcp:
        settings["mcp"] = mcp
    saved = os.environ.get("CO_LOAD_PLUGINS")
    os.environ["CO_LOAD_PLUGINS"] = ""  # only MCP tools in these turns
    try:
        return make_app(settings, cwd=cwd)
    finally:
        if saved is None:
            os.environ.pop("CO_LOAD_PLUGINS", None)
        else:
            os.environ["CO_LOAD_PLUGINS"] = saved


@dataclass
class Turn:
    output: str
    tools_seen: list[str]
    results: list[str]  # what the model got back, in order
    warnings: list[str]
    decisions: dict[str, Any] = field(default_factory=dict)
    session_id: str = ""


class _User(NoTerminal):
    """Answers approval questions with ``answer(decision)``; collects warnings."""

    def __init__(self, answer: Callable[[Any], bool] | None) -> None:
        self.answer = answer
        self.interactive = answer is not None
        self.warnings: list[str] = []

    async def approve(self, record: Any) -> Answer:
        yes = bool(self.answer and self.answer(record.decision))
        return Answer(yes, "" if yes else "the user said no")

    def warn(self, message: str) -> None:
        self.warnings.append(message)


def run_turn(
    app: Any,
    workspace: Path,
    calls: list[tuple[str, dict[str, Any]]],
    *,
    headless: bool = True,
    answer: Callable[[Any], bool] | None = None,
) -> Turn:
    """The model makes ``calls`` one after another, then says what it got back."""
    import asyncio

    seen: list[str] = []
    results: list[str] = []

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen[:] = sorted(t.name for t in info.function_tools)
        back = [
            p
            for m in messages
            for p in getattr(m, "parts", [])
            if isinstance(p, ToolReturnPart | RetryPromptPart)
        ]
        results[:] = [str(p.content) for p in back]
        if len(back) < len(calls):
            name, args = calls[len(back)]
            return ModelResponse(parts=[ToolCallPart(name, args, f"call{len(back)}")])
        return ModelResponse(parts=[TextPart("results: " + " | ".join(results))])

    user = _User(answer if not headless else None)
    app.cwd = workspace
    conversation = Conversation(app, frontend=user, headless=headless)
    conversation.model = ResolvedModel(scripted_model(script), "scripted")
    conversation.prepare()
    try:
        result = asyncio.run(conversation.run_turn("go"))
        session_id = conversation.deps.session_id
    finally:
        conversation.close()
    decisions = {record.call_id: record.decision for record in result.calls}
    return Turn(result.output, list(seen), list(results), user.warnings, decisions, session_id)


def audit_lines(data_dir: Path, session: str = "") -> list[dict[str, Any]]:
    """The audit lines of one session (or of every session) under ``data_dir``."""
    files = (
        [data_dir / "audit" / f"{session}.jsonl"]
        if session
        else (data_dir / "audit").glob("*.jsonl")
    )
    return [
        json.loads(line)
        for path in files
        if path.exists()
        for line in path.read_text().splitlines()
    ]


class Chat:
    """One conversation over several turns, as ``co chat`` holds it: one event loop, the
    MCP servers started once; each turn's model makes the given calls, then answers."""

    def __init__(self, app: Any, workspace: Path, *, headless: bool = True) -> None:
        import asyncio

        from co_core.ui.render import result_line

        self.user = _User(None)
        self.lines: list[str] = []  # the terminal's line for each call that ended

        def show(record: Any) -> None:
            if record.ended:
                self.lines.append(result_line(record.result, record.status))

        self.user.show = show  # type: ignore[method-assign]
        app.cwd = workspace
        self.conversation = Conversation(app, frontend=self.user, headless=headless)
        self.runner = asyncio.Runner()
        # a scripted model from the start: no default model is started behind the test
        self.conversation.model = ResolvedModel(scripted_model(lambda m, i: None), "scripted")
        self.conversation.prepare()

    def turn(self, calls: list[tuple[str, dict[str, Any]]]) -> Any:
        """The model makes ``calls`` one after another, then says what it got back."""
        done: list[int] = []

        def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            step = len(done)
            done.append(step)
            if step < len(calls):
                name, args = calls[step]
                return ModelResponse(parts=[ToolCallPart(name, args)])
            return ModelResponse(parts=[TextPart(f"turn done after {len(calls)} calls")])

        self.conversation.model = ResolvedModel(scripted_model(script), "scripted")
        return self.runner.run(self.conversation.run_turn("go"))

    def close(self) -> list[str]:
        try:
            return self.conversation.close()
        finally:
            self.runner.close()


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
