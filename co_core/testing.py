"""Helpers for testing Co and Co plugins (a pytest plugin, loaded automatically).

Public API for plugin authors (docs/plugins.md, "Testing your plugin"):

- fixture ``co_dirs``: private config/data/cache dirs, so nothing touches real settings;
- ``use_plugin(plugin)``: a context manager giving an app (``co_core.CoApp``) with your
  plugin registered for one test (installed plugins are left out unless you ask for them);
- ``make_app`` / ``make_deps``: the app and the ``CoDeps`` a tool sees in a real run;
- ``script_calls`` / ``scripted_model`` / ``run_turn``: run one turn through Co's real
  agent with a scripted model (pydantic-ai ``FunctionModel``) while your real tools run;
- ``Approvals``: answers approval requests in ``run_turn`` and records what was asked;
- ``audit_entries``: the audit lines (JSONL, redacted) a session wrote, as ``AuditEntry``;
- ``status_rows`` / ``run_slash``: your status checks (``CheckRow``) and slash commands as
  Co runs them;
- ``run_co`` / ``install_fake_plugin`` / ``install_package``: run ``co`` in a subprocess as
  a user would, with a plugin made discoverable through real entry points;
- ``traced``: Co's traces on for a block, to check the spans your plugin leaves;
- ``private_imports``: lines of your package importing co_core modules that are not public;
- ``last_user_text``: what a scripted model usually reacts to.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict, cast

import pytest

from co_core.agent.frontend import NoTerminal
from co_core.kernel.app import App, CoApp, load_app
from co_core.kernel.deps import CoDeps
from co_core.kernel.status import CheckRow as CheckRow  # public: what status_rows returns

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models import Model
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    # A scripted model: the conversation so far in, the model's next response out.
    Script = Callable[[list[ModelMessage], AgentInfo], ModelResponse | Awaitable[ModelResponse]]

    from co_core.agent.calls import ToolCallRecord
    from co_core.agent.frontend import Answer
    from co_core.kernel.settings import Settings
    from co_core.kernel.tools import ToolCall


@pytest.fixture
def co_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Private XDG dirs for Co under ``tmp_path``; returns the config dir."""
    for kind in ("config", "data", "cache"):
        folder = tmp_path / f"co-{kind}"
        folder.mkdir()
        monkeypatch.setenv(f"CO_{kind.upper()}_DIR", str(folder))
    yield tmp_path / "co-config"


def write_settings(values: Mapping[str, object], config_dir: Path) -> Path:
    """Write ``settings.json`` (nested sections as dicts) into a config dir."""
    path = config_dir / "settings.json"
    path.write_text(json.dumps(values), encoding="utf-8")
    path.chmod(0o600)
    return path


def make_app(settings: Mapping[str, object] | None = None, *, cwd: Path | None = None) -> CoApp:
    """An app over the installed plugins, with ``settings`` written to the current CO_CONFIG_DIR."""
    if settings is not None:
        from co_core.kernel import paths

        paths.ensure_dir(paths.config_dir())
        write_settings(settings, paths.config_dir())
    return load_app(cwd)


def make_deps(
    settings: Mapping[str, object] | None = None, *, workspace: Path | None = None
) -> CoDeps:
    """Deps as a tool sees them in a real run (call inside a test using ``co_dirs``)."""
    return make_app(settings, cwd=workspace).make_deps(workspace)


def run_co(
    *args: str,
    env: dict[str, str] | None = None,
    input: str | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``co ARGS`` in a subprocess, as a user would, inheriting the test's environment."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "co_core", *args],
        env=full_env,
        input=input,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def install_fake_plugin(
    site: Path,
    name: str,
    source: str,
    *,
    version: str = "1.0.0",
    module: str | None = None,
    requires: Sequence[str] = (),
) -> Path:
    """Make ``site`` hold a plugin distribution ``co-NAME`` whose hook module is ``source``.

    Put ``site`` on PYTHONPATH and Co discovers it through the real entry-point machinery,
    exactly like a ``pip install``-ed plugin.
    """
    module = module or f"co_fake_{name.replace('-', '_')}"
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    dist = site / f"co_{name.replace('-', '_')}-{version}.dist-info"
    dist.mkdir(exist_ok=True)
    requirements = "".join(f"Requires-Dist: {r}\n" for r in requires)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: co-{name}\nVersion: {version}\n{requirements}",
        encoding="utf-8",
    )
    (dist / "entry_points.txt").write_text(f"[co]\n{name} = {module}\n", encoding="utf-8")
    return site


def install_package(site: Path, name: str, module: str, *, version: str = "0.1.0") -> Path:
    """Make ``site`` declare plugin ``name`` whose hook module ``module`` is already importable.

    Put ``site`` and the folder holding your package on PYTHONPATH and ``co`` finds the
    plugin through its entry point, like a ``pip install -e``-ed one.
    """
    site.mkdir(parents=True, exist_ok=True)
    dist = site / f"co_{name.replace('-', '_')}-{version}.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: co-{name}\nVersion: {version}\n", encoding="utf-8"
    )
    (dist / "entry_points.txt").write_text(f"[co]\n{name} = {module}\n", encoding="utf-8")
    return site


# -- registering a plugin for one test ----------------------------------------------------


@contextmanager
def use_plugin(
    plugin: object,
    *,
    name: str = "test",
    settings: Mapping[str, object] | None = None,
    cwd: Path | None = None,
    installed: bool = False,
) -> Iterator[CoApp]:
    """An App with ``plugin`` (a hook module or an object with hookimpls) registered as ``name``.

    Installed plugins are not loaded unless ``installed=True``, so the test sees only what
    it registers. The registration ends with the ``with`` block.
    """
    previous = os.environ.get("CO_LOAD_PLUGINS")
    if not installed:
        os.environ["CO_LOAD_PLUGINS"] = ""
    try:
        app = cast(App, make_app(settings, cwd=cwd))
    finally:
        if previous is None:
            os.environ.pop("CO_LOAD_PLUGINS", None)
        else:
            os.environ["CO_LOAD_PLUGINS"] = previous
    app.host.register(plugin, name)
    try:
        yield app
    finally:
        app.host.unregister(name)


def status_rows(app: CoApp) -> dict[str, CheckRow]:
    """``co status`` as data: check name -> ``CheckRow`` (``.name``, ``.plugin``, ``.state``:
    "ok", "warn", "fail" or "off", ``.detail``, ``.seconds``), every plugin's checks run."""
    from co_core.kernel.status import collect_status

    return {row.name: row for row in collect_status(cast(App, app))}


def run_slash(app: CoApp, line: str, deps: CoDeps | None = None) -> object:
    """Run a REPL slash command line (``"/todos"``, ``"/undo 2"``) as ``co chat`` would."""
    name, _, arg = line.strip().removeprefix("/").partition(" ")
    commands = cast(App, app).host.named("register_slash_commands", "slash command")
    if name not in commands:
        raise KeyError(f"no slash command /{name} (have: {', '.join(sorted(commands))})")
    return commands[name].value(arg.strip(), deps if deps is not None else app.make_deps())


PUBLIC_MODULES = ("co_core", "co_core.testing")


def module_imports(path: Path, *, package: str = "") -> list[tuple[int, str]]:
    """``(line, "pkg.module.name")`` for every import in a Python file, in order.

    ``from X import a`` gives ``X.a`` (``a`` may be a module or a name in ``X``); relative
    imports are made absolute from ``package``, the file's dotted module name. Imports
    inside functions count; those under ``if TYPE_CHECKING:`` do not (they never run).
    """
    import ast

    tree = ast.parse(Path(path).read_text(encoding="utf-8"), str(path))
    base = package if Path(path).name == "__init__.py" else package.rpartition(".")[0]
    found: list[tuple[int, str]] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for other in child.orelse:
                    walk(other)
                continue
            if isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                module = child.module or ""
                if child.level:
                    parts = base.split(".")
                    parts = parts[: len(parts) - child.level + 1]
                    module = ".".join([*parts, module] if module else parts)
                found.extend((child.lineno, f"{module}.{alias.name}") for alias in child.names)
            walk(child)

    walk(tree)
    return found


def private_imports(root: Path) -> list[str]:
    """Imports of co_core other than its public API (``co_core``, ``co_core.testing``) in
    the ``.py`` files under ``root``: ``"path:line: imports private module X"`` (empty: good)."""
    problems = []
    for path in sorted(Path(root).rglob("*.py")):
        try:
            imports = module_imports(path)
        except (OSError, SyntaxError, ValueError) as exc:
            problems.append(f"{path}: cannot be read: {exc}")
            continue
        for line, target in imports:
            if not _public(target):
                problems.append(f"{path}:{line}: imports private module {target}")
    return problems


def _public(target: str) -> bool:
    """``co_core``, a name in its ``__all__``, and ``co_core.testing``; not co_core's layers."""
    import co_core

    if target.partition(".")[0] != "co_core" or target in PUBLIC_MODULES:
        return True
    parts = target.split(".")
    if parts[1] == "testing":
        return True
    return len(parts) == 2 and parts[1] in co_core.__all__


# -- traces -------------------------------------------------------------------------------


@contextmanager
def traced(settings: Settings, *, content: bool = False) -> Iterator[None]:
    """Co's traces on for the ``with`` block, into the trace database the settings name
    (``telemetry.sqlite_path``); every span is written when the block ends.
    ``content=True`` is ``--trace-content``."""
    from co_core import telemetry

    telemetry.setup_tracing(settings, include_content=content)
    try:
        yield
    finally:
        telemetry.shutdown_tracing()


# -- audit ----------------------------------------------------------------------------------


class AuditEntry(TypedDict, total=False):
    """One line of the audit trail (docs/policy.md, "Audit trail"), secrets already masked.

    Every entry has ``time``, ``session``, ``event``, ``call_id``, ``plugin``, ``tool``;
    the rest depends on the event.
    """

    time: str  # ISO 8601, UTC
    session: str
    event: Literal["decision", "answer", "execution"]
    call_id: str
    plugin: str
    tool: str
    permission: str  # the permission key decided on
    # "decision": the policy's verdict, before the call runs
    effect: str  # "allow", "deny", "ask" or "ask_once" ("answer": "allow" or "deny")
    source: str  # where it came from: a rule level, "plugin", "risk", "grant", "user", ...
    rule: str | None  # the deciding rule's pattern
    reason: str | None
    arguments: dict[str, object]  # as the tool will run with them (resolved)
    as_written: dict[str, object]  # as the model wrote them, when resolving changed them
    parts: list[dict[str, object]]  # a shell command's parts, each decided
    asked_by: str
    # "answer": the user's answer to an approval prompt
    scope: str  # "once", "session" or "project"
    approved: list[str]  # the keys approved (empty: denied)
    # "execution": the call ran (or tried to)
    status: Literal["ok", "retry", "error"]
    duration_ms: float
    error: str | None  # the error or retry text; None when ok


def audit_entries(session_id: str | None = None, *, event: str | None = None) -> list[AuditEntry]:
    """The audit lines written so far (one session's, or all), optionally one ``event`` kind:
    "decision" (the policy's verdict), "answer" (an approval answer) or "execution" (a tool
    run, with ``status`` "ok", "error" or "retry")."""
    from co_core.policy.audit import read_entries

    return [
        cast(AuditEntry, e)
        for e in read_entries(session_id)
        if event is None or e.get("event") == event
    ]


# -- scripted models ------------------------------------------------------------------------


def script_calls(
    *calls: tuple[str, Mapping[str, object]],
    answer: str | Callable[[list[str]], str] | None = None,
) -> Script:
    """A model script: ask for ``calls`` (tool name, args) in order, one per step, then answer.

    ``answer`` is the final text, or a function of the tool results (``display`` of a
    ToolResult, else the returned value; a denial or retry text as the model saw it).
    By default the answer is the tool results joined by newlines. Use it as
    ``FunctionModel(script_calls(...))`` or pass it to ``run_turn``.
    """
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        RetryPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )

    from co_core.kernel.results import ToolResult

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen: list[str] = []
        for message in messages:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    content = part.content
                    seen.append(
                        content.display if isinstance(content, ToolResult) else str(content)
                    )
                elif isinstance(part, RetryPromptPart) and part.tool_name:
                    seen.append(part.model_response())
        step = len(seen)
        if step < len(calls):
            tool, args = calls[step]
            return ModelResponse(parts=[ToolCallPart(tool, dict(args))])
        if callable(answer):
            text = answer(seen)
        else:
            text = answer if answer is not None else "\n".join(seen)
        return ModelResponse(parts=[TextPart(text)])

    return script


# -- running a turn through the real agent -------------------------------------------------


@dataclass
class Approvals:
    """Answers approval requests during ``run_turn`` and records each one it was asked.

    ``answer`` is True (approve everything), False (deny everything), a dict from tool
    name to True/False (others denied), or a function ``(ToolCall) -> bool``. ``reason``
    is the text a denial passes to the model; ``scope`` is what a yes covers: "once",
    "session" (later identical calls are not asked) or "project" (a saved grant).
    """

    answer: bool | Mapping[str, bool] | Callable[[ToolCall], bool] = False
    reason: str = ""
    scope: str = "once"
    asked: list[ToolCall] = field(default_factory=list)

    def decide(self, call: ToolCall) -> bool:
        self.asked.append(call)
        if callable(self.answer):
            return bool(self.answer(call))
        if isinstance(self.answer, Mapping):
            return bool(self.answer.get(call.tool, False))
        return bool(self.answer)

    @property
    def tools_asked(self) -> list[str]:
        return [call.tool for call in self.asked]


class _ApprovalDesk(NoTerminal):
    """The frontend ``run_turn`` gives the conversation: ``Approvals`` answers."""

    interactive = True

    def __init__(self, desk: Approvals) -> None:
        self.desk = desk

    async def approve(self, record: ToolCallRecord) -> Answer:
        from co_core.agent.frontend import Answer

        scope = self.desk.scope if self.desk.scope in ("once", "session", "project") else "once"
        return Answer(self.desk.decide(record.call), self.desk.reason, scope)  # type: ignore[arg-type]


class CallRecord(TypedDict):
    """One tool call of a turn, as ``co ask --json`` reports it."""

    tool: str
    args: dict[str, object]  # as the tool ran with them (resolved)
    permission: str  # the permission key the policy decided on
    decision: Literal["allow", "deny", "approved", "denied"]  # by the policy, or the user
    reason: str  # why, when denied
    # ok; retry: ModelRetry, the model was asked to fix the call; error: the tool raised;
    # denied: never ran; interrupted: Ctrl+C; pending: never ended (the turn stopped first)
    status: Literal["ok", "retry", "error", "denied", "interrupted", "pending"]


@dataclass
class Turn:
    """What one scripted turn did: the final text, each tool call's fate, the session id."""

    output: str
    calls: list[CallRecord]
    session_id: str
    approvals: Approvals
    messages: list[ModelMessage] = field(default_factory=list)

    def audit(self, event: str | None = None) -> list[AuditEntry]:
        """This turn's session's audit lines (see ``AuditEntry``)."""
        return audit_entries(self.session_id, event=event)


def run_turn(
    app: CoApp,
    prompt: str,
    script: Script | Model,
    *,
    approvals: Approvals | bool | Mapping[str, bool] | None = None,
    history: Sequence[ModelMessage] = (),
    headless: bool = False,
) -> Turn:
    """Run one turn of ``co`` through the real agent with a scripted model.

    ``script`` is a FunctionModel function (see ``script_calls``) or a ready pydantic-ai
    model. Your real tools run; calls needing approval go to ``approvals`` (default: the
    user says no). ``headless=True`` runs like ``co ask``: nobody to ask, so such calls are
    denied with the reason and the flag that would allow them. Resources are closed when
    the turn ends.
    """
    import asyncio

    from co_core.agent.conversation import Conversation
    from co_core.agent.models import ResolvedModel

    desk = approvals if isinstance(approvals, Approvals) else Approvals(approvals or False)
    conversation = Conversation(cast(App, app), frontend=_ApprovalDesk(desk), headless=headless)
    conversation.model = ResolvedModel(_as_model(script), "scripted")
    conversation.history = list(history)
    conversation.prepare()
    try:
        result = asyncio.run(conversation.run_turn(prompt))
        session_id = conversation.deps.session_id
    finally:
        problems = conversation.close()
    if problems:
        raise AssertionError(f"resources failed to close: {problems}")
    return Turn(
        result.output,
        [cast(CallRecord, record.as_dict()) for record in result.calls],
        session_id,
        desk,
        list(conversation.history),
    )


def scripted_model(
    script: Script,
    *,
    chunk: int = 8,
    delay: float = 0.0,
    name: str = "scripted",
) -> FunctionModel:
    """A pydantic-ai ``FunctionModel`` running ``script(messages, info) -> ModelResponse``
    (sync or async) for plain and streamed requests.

    ``co chat`` and ``co ask`` stream, so a model handed to them (``co ask --model
    function:my_module:model``) must stream too: text comes in ``chunk``-character pieces
    (``delay`` seconds apart), tool calls whole.
    """
    import asyncio
    import inspect

    from pydantic_ai.messages import TextPart, ToolCallPart
    from pydantic_ai.models.function import DeltaToolCall, FunctionModel

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        result = script(messages, info)
        response: ModelResponse = await result if inspect.isawaitable(result) else result
        return response

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
        response = await respond(messages, info)
        for index, part in enumerate(response.parts):
            if isinstance(part, TextPart):
                if not part.content:
                    yield ""  # an empty answer is an answer too
                for start in range(0, len(part.content), chunk):
                    if delay:
                        await asyncio.sleep(delay)
                    yield part.content[start : start + chunk]
            elif isinstance(part, ToolCallPart):
                args = part.args if isinstance(part.args, str) else json.dumps(part.args or {})
                yield {index: DeltaToolCall(part.tool_name, args, tool_call_id=part.tool_call_id)}

    return FunctionModel(respond, stream_function=stream, model_name=name)


def last_user_text(messages: list[ModelMessage]) -> str:
    """The most recent user prompt in the history (what a script usually reacts to)."""
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def _as_model(script: Script | Model) -> Model:
    """A pydantic-ai model from a script function (streaming too), or the model itself."""
    from pydantic_ai.models import Model

    return script if isinstance(script, Model) else scripted_model(script)
