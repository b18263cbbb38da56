"""Assemble Co's pydantic-ai agent from the plugin host.

Every loaded plugin's tools become pydantic-ai ``Tool``s (tools that write, send or
execute run one at a time); plugins' ``system_instructions`` are appended to the system
prompt; retries and the per-turn request limit come from settings. One capability
(``CoHooks``) adds what is Co's own: the approval gate in front of every call, the
recovery of tool calls that small models write as JSON text, context fitting, the
request deadline and the traces' spans (one capability: each costs every tool call).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ApprovalRequired, ModelRequestTimeout
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolDenied
from pydantic_ai.usage import UsageLimits

from co_core import gate
from co_core.deps import CoDeps
from co_core.plugins import PluginHost
from co_core.settings import Settings
from co_core.textcalls import parse_text_tool_calls
from co_core.tools import ToolCall, ToolSpec

SYSTEM_PROMPT = """\
You are Co, an assistant running in the user's terminal.

### Response style
- Be terse: users want results, not explanations.
- On success show the output, then a brief note if needed. On error show the error and suggest a fix.

### Tool output
- Most tools return an object with a `display` field: show the `display` value verbatim.
- Never reformat, summarize or drop URLs from tool output.
- `count` is how many items matched; `count` 0 means the call was fine and nothing matched.
- If a result has `has_more=true`, tell the user more results are available.

### Tool usage
- Use tools proactively to complete tasks; read before modifying, check after changing.
- If a tool says you called it wrong, fix the arguments as it says and call it again.
- If a call is denied, do not retry it; tell the user what was denied and why.

### Pagination
- When a result has `has_more=true`, more results exist.
- If the user asks for "more", "next" or "next 10", call the same tool with the same query and the
  next page (`next_page` if the result gives one, else page + 1).
- Do not say "no more results" unless you called the tool and `has_more` was false.
"""

INTERRUPTED = "Interrupted by user."
SIDE_EFFECTS = ("write", "send", "exec")

# approver(call, decision) -> (approved, reason the user gave or "")
#   or (approved, reason, scope) with scope "once" | "session" | "project" (what a yes covers)
Approver = Callable[[ToolCall, gate.Decision], Awaitable[tuple[Any, ...]]]
# announce([(call, decision), ...]): several calls of one model response await approval
Announcer = Callable[[list[tuple[ToolCall, gate.Decision]]], Awaitable[None]]
SCOPES = ("once", "session", "project")


@dataclass
class CallRecord:
    """What happened to one tool call, for ``co ask --json`` and the audit."""

    tool: str
    args: dict[str, Any]
    decision: str = "allow"
    reason: str = ""
    status: str = "pending"

    def as_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "args": self.args,
            "decision": self.decision,
            "reason": self.reason,
            "status": self.status,
        }


@dataclass
class Runtime:
    """What the agent needs from whoever drives it (REPL or ``co ask``), changeable per turn."""

    approver: Approver | None = None  # None: no terminal; calls needing approval are denied
    announce: Announcer | None = None  # shows a batch of pending calls before the first prompt
    yolo: bool = False
    decide: Callable[..., gate.Decision] = gate.decide
    records: dict[str, CallRecord] = field(default_factory=dict)
    live_messages: list[ModelMessage] | None = None  # the running turn's history (for Ctrl+C)
    engine: Any = None  # co_core.policy.PolicyEngine: decides, audits and remembers answers
    pending: dict[str, Any] = field(default_factory=dict)  # engine decisions awaiting an answer
    started: dict[str, float] = field(default_factory=dict)
    calls: dict[str, ToolCall] = field(default_factory=dict)  # as decided, for the audit

    def gate(self, spec: ToolSpec, args: dict[str, Any], call_id: str, deps: Any) -> gate.Decision:
        """The seam: the policy engine when there is one, else the default rule of gate.py."""
        if self.engine is None:
            return self.decide(tool_call(spec, args), deps, yolo=self.yolo)
        call = self.calls[call_id] = self.engine.make_call(spec.name, args)
        decision = self.engine.decide(call, call_id=call_id)
        if decision.needs_approval:
            self.pending[call_id] = decision
            return gate.Decision("ask", decision.reason, decision.source)
        return gate.Decision(
            "allow" if decision.allowed else "deny", decision.reason, decision.source
        )

    def answered(self, call_id: str, approved: bool, reason: str, scope: str = "once") -> None:
        """Report the user's answer to the engine (a session or project yes becomes a grant)."""
        decision = self.pending.pop(call_id, None)
        if self.engine is not None and decision is not None:
            self.engine.record_answer(
                decision, approved, scope=scope, reason=reason or None, call_id=call_id
            )

    def executed(self, spec: ToolSpec, args: dict[str, Any], call_id: str, status: str) -> None:
        if self.engine is not None:
            duration = time.perf_counter() - self.started.pop(call_id, time.perf_counter())
            call = self.calls.pop(call_id, None) or self.engine.make_call(spec.name, args)
            self.engine.record_execution(call, status=status, duration=duration, call_id=call_id)


def tool_call(spec: ToolSpec, args: dict[str, Any]) -> ToolCall:
    return ToolCall(spec.name, spec.plugin, dict(args), spec.permission_key(args), spec.risk)


@dataclass
class CoHooks(AbstractCapability[CoDeps]):
    """Co's policy gate and text-tool-call recovery, as a pydantic-ai capability."""

    specs: dict[str, ToolSpec]
    runtime: Runtime
    text_tool_calls: bool = True
    # Context fitting (co_core.sessions), run from here rather than as a capability of its
    # own: pydantic-ai copies the run context for every capability on every hook call and
    # wraps the event stream once per capability, so each one costs every tool call.
    fit: AbstractCapability[CoDeps] | None = None
    # co_core.telemetry's AgentTracing when traces are on: spans from these same hooks,
    # for the same reason (docs/observability.md, Overhead)
    tracing: Any = None
    # The whole-request deadline (setting request_timeout), kept here as one cancel scope
    # per request: pydantic-ai's own (ModelSettings) opens one around every streamed event.
    request_timeout: float | None = None

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def wrap_run(self, ctx: RunContext[CoDeps], *, handler: Any) -> Any:
        if self.tracing is None:
            return await handler()
        return await self.tracing.run(ctx, handler)

    async def wrap_model_request(
        self, ctx: RunContext[CoDeps], *, request_context: Any, handler: Any
    ) -> Any:
        request = handler
        if self.tracing is not None:
            request = functools.partial(self.tracing.model_request, ctx, handler=handler)
        if self.request_timeout is None:
            return await request(request_context)
        with anyio.move_on_after(self.request_timeout):
            return await request(request_context)
        raise ModelRequestTimeout(request_context.model.model_name, self.request_timeout)

    async def wrap_tool_execute(
        self,
        ctx: RunContext[CoDeps],
        *,
        call: ToolCallPart,
        tool_def: Any,
        args: dict[str, Any],
        handler: Any,
    ) -> Any:
        if self.tracing is None:
            return await handler(args)
        return await self.tracing.tool(call, args, handler)

    async def on_tool_validate_error(
        self, ctx: RunContext[CoDeps], *, call: ToolCallPart, tool_def: Any, args: Any, error: Any
    ) -> Any:
        if self.tracing is not None:
            self.tracing.invalid_call(call, error)
        raise error

    async def before_model_request(self, ctx: RunContext[CoDeps], request_context: Any) -> Any:
        if self.fit is None:
            return request_context
        return await self.fit.before_model_request(ctx, request_context)

    async def after_model_request(
        self, ctx: RunContext[CoDeps], *, request_context: Any, response: ModelResponse
    ) -> ModelResponse:
        self.runtime.live_messages = ctx.messages
        if not self.text_tool_calls or any(isinstance(p, ToolCallPart) for p in response.parts):
            return response
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        calls = parse_text_tool_calls(text, self.specs)
        if not calls:
            return response
        parts = [
            ToolCallPart(name, args, tool_call_id=f"text-{uuid.uuid4().hex[:12]}")
            for name, args in calls
        ]
        return dataclasses.replace(response, parts=parts)

    async def before_tool_execute(
        self, ctx: RunContext[CoDeps], *, call: ToolCallPart, tool_def: Any, args: dict[str, Any]
    ) -> dict[str, Any]:
        self.runtime.live_messages = ctx.messages
        spec = self.specs.get(call.tool_name)
        if spec is None:
            return args
        record = self.runtime.records.setdefault(
            call.tool_call_id, CallRecord(call.tool_name, dict(args))
        )
        self.runtime.started[call.tool_call_id] = time.perf_counter()
        if ctx.tool_call_approved:
            return args  # approved by the user (or the policy) in handle_deferred_tool_calls
        decision = self.runtime.gate(spec, args, call.tool_call_id, ctx.deps)
        record.decision, record.reason = decision.effect, decision.reason
        if decision.effect == "allow":
            return args
        raise ApprovalRequired(
            {"effect": decision.effect, "reason": decision.reason, "source": decision.source}
        )

    async def after_tool_execute(
        self,
        ctx: RunContext[CoDeps],
        *,
        call: ToolCallPart,
        tool_def: Any,
        args: dict[str, Any],
        result: Any,
    ) -> Any:
        spec = self.specs.get(call.tool_name)
        if spec is not None:
            self.runtime.executed(spec, args, call.tool_call_id, "ok")
        return result

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[CoDeps], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        """Resolve one model response's pending calls: shown together, answered one by one."""
        approvals: dict[str, Any] = {}
        asking: list[tuple[Any, ToolSpec, dict[str, Any], gate.Decision]] = []
        for part in requests.approvals:
            meta = requests.metadata.get(part.tool_call_id, {})
            spec = self.specs.get(part.tool_name)
            args = part.args_as_dict()
            record = self.runtime.records.setdefault(
                part.tool_call_id, CallRecord(part.tool_name, args)
            )
            decision = gate.Decision(
                meta.get("effect", "ask"), meta.get("reason", ""), meta.get("source", "")
            )
            if decision.effect == "deny":
                record.decision, record.status = "deny", "denied"
                approvals[part.tool_call_id] = ToolDenied(f"Denied by policy: {decision.reason}")
            elif self.runtime.approver is None or spec is None:
                record.decision, record.status = "deny", "denied"
                record.reason = "needs approval and no terminal is attached"
                approvals[part.tool_call_id] = ToolDenied(
                    f"Denied: {part.tool_name} needs the user's approval and no one is at a "
                    "terminal to give it (run in `co chat`, or rerun with --yolo)."
                )
            else:
                asking.append((part, spec, args, decision))
        if len(asking) > 1 and self.runtime.announce is not None:
            await self.runtime.announce([(tool_call(s, a), d) for _, s, a, d in asking])
        granted = False
        for part, spec, args, decision in asking:
            record = self.runtime.records[part.tool_call_id]
            if granted:  # an earlier "for this session / project" may cover this call too
                again = self.runtime.gate(spec, args, part.tool_call_id, ctx.deps)
                if again.effect == "allow":
                    record.decision, record.reason = "allow", again.reason
                    approvals[part.tool_call_id] = True
                    continue
            approved, why, scope = _answer(
                await self.runtime.approver(tool_call(spec, args), decision)  # type: ignore[misc]
            )
            self.runtime.answered(part.tool_call_id, approved, why, scope)
            granted = granted or (approved and scope != "once")
            record.decision = "approved" if approved else "denied"
            record.reason = why
            if approved:
                approvals[part.tool_call_id] = True
            else:
                record.status = "denied"
                message = "The user denied this call"
                approvals[part.tool_call_id] = ToolDenied(
                    f"{message}: {why}" if why else f"{message}."
                )
        return DeferredToolResults(approvals=approvals)


def _answer(raw: tuple[Any, ...]) -> tuple[bool, str, str]:
    """An approver's answer as (approved, reason, scope); a two-item answer means "once"."""
    approved, why = bool(raw[0]), str(raw[1] or "")
    scope = str(raw[2]) if len(raw) > 2 and raw[2] in SCOPES else "once"
    return approved, why, scope


def instructions(host: PluginHost, settings: Settings) -> str:
    parts = [SYSTEM_PROMPT]
    for plugin, text in host.call_each("system_instructions", settings=settings):
        if isinstance(text, str) and text.strip():
            parts.append(f"### From plugin {plugin}\n{text.strip()}")
    return "\n\n".join(parts)


def load_tools(
    host: PluginHost, warn: Callable[[str], None]
) -> tuple[list[Tool], dict[str, ToolSpec]]:
    """Import every declared tool; one that fails to import is named and skipped."""
    tools: list[Tool] = []
    specs: dict[str, ToolSpec] = {}
    for spec in host.tools():
        try:
            function = spec.load()
            tool = Tool(
                function,
                name=spec.name,
                max_retries=spec.retries,
                sequential=spec.risk in SIDE_EFFECTS,
                metadata={"plugin": spec.plugin, "risk": spec.risk, "permission": spec.permission},
            )
        except Exception as exc:  # a broken tool must not take Co down
            warn(
                f"tool {spec.name!r} of plugin {spec.plugin!r} skipped: {type(exc).__name__}: {exc}"
            )
            continue
        tools.append(tool)
        specs[spec.name] = spec
    return tools, specs


@dataclass
class CoAgent:
    """The agent plus what a turn needs: specs for display, the runtime, the usage limits."""

    agent: Agent[CoDeps, str]
    specs: dict[str, ToolSpec]
    runtime: Runtime
    limits: UsageLimits
    hooks: CoHooks  # Co's capability: the gate, text tool calls, context fitting, tracing


def build_agent(
    host: PluginHost,
    settings: Settings,
    model: Any = None,
    *,
    runtime: Runtime | None = None,
    warn: Callable[[str], None] = lambda message: None,
    workspace: Any = None,
    capabilities: list[Any] | None = None,
    fit: AbstractCapability[CoDeps] | None = None,
) -> CoAgent:
    """The agent for a session; ``model`` may be swapped per run (``/model``).

    ``fit`` is a capability whose ``before_model_request`` shapes each request (context
    fitting); it runs inside Co's own capability, which is cheaper than one more.
    """
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")  # Co draws its own screen
    core = settings.core
    runtime = runtime or Runtime()
    tools, specs = load_tools(host, warn)
    hooks = CoHooks(
        specs,
        runtime,
        text_tool_calls=core.text_tool_calls,
        fit=fit,
        request_timeout=core.request_timeout,
    )
    from co_core.mcp.toolsets import mcp_toolsets

    # MCP servers' tools join ``specs`` when listed, so the same gate sees them.
    toolsets = mcp_toolsets(settings, specs=specs, workspace=workspace, warn=warn)
    agent: Agent[CoDeps, str] = Agent(
        model,
        deps_type=CoDeps,
        instructions=instructions(host, settings),
        tools=tools,
        toolsets=toolsets,
        retries={"tools": core.retries, "output": core.retries},
        capabilities=[hooks, *(capabilities or [])],
        defer_model_check=True,
    )
    return CoAgent(agent, specs, runtime, UsageLimits(request_limit=core.request_limit), hooks)


def patch_dangling(messages: list[ModelMessage], note: str = INTERRUPTED) -> list[ModelMessage]:
    """Answer tool calls left without a result (a cancelled turn) so the history stays valid."""
    if not messages or not isinstance(messages[-1], ModelResponse):
        return messages
    calls = [p for p in messages[-1].parts if isinstance(p, ToolCallPart)]
    if not calls:
        return messages
    returns = [
        ToolReturnPart(c.tool_name, note, tool_call_id=c.tool_call_id, outcome="interrupted")
        for c in calls
    ]
    return [*messages, ModelRequest(parts=returns)]
