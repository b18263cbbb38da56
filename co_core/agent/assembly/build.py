"""Assemble Co's pydantic-ai agent from the plugin host.

Every loaded plugin's tools become pydantic-ai ``Tool``s (tools that write, send or
execute run one at a time); the session's other tool sources (MCP servers) are added as
toolsets; plugins' ``system_instructions`` are appended to the system prompt; retries and
the per-turn request limit come from settings. Co's own behaviour comes as plain
capabilities, each with one job: the policy gate (which drives every call through the
call pipeline, co_core.agent.calls), the small-model steering (when the steering layer
gives one: co_core.agent.assembly.steering), the request deadline, context
fitting and the traces' spans, handed to pydantic-ai as one group
(co_core.agent.assembly.group); the toolbox chooses each request's tools.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.usage import UsageLimits

from co_core.agent.assembly.deadline import RequestDeadline
from co_core.agent.assembly.group import CapabilityGroup
from co_core.agent.assembly.steering import Steering
from co_core.agent.calls.gate import PolicyGate
from co_core.agent.calls.loops import LoopGuard
from co_core.agent.calls.pipeline import CallPipeline
from co_core.agent.counting import counter_for
from co_core.agent.tools.toolbox import FIND_TOOLS, Toolbox, find_tools_spec
from co_core.kernel.deps import CoDeps
from co_core.kernel.host import PluginHost
from co_core.kernel.settings import Settings
from co_core.kernel.tools import ToolSpec, params_of
from co_core.sessions.counting import Counting
from co_core.telemetry import capabilities as tracing_capabilities

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

SMALL_PROMPT = """\
You are Co, a helpful assistant in the user's terminal. Answer briefly.
Use a tool only when the request needs one, then answer with what it returned.
If a call is denied, do not try again: tell the user it was denied and why.
"""

SIDE_EFFECTS = ("write", "send", "exec")


def plugin_instructions(host: PluginHost, settings: Settings) -> str:
    parts = []
    for plugin, text in host.call_each("system_instructions", settings=settings):
        if isinstance(text, str) and text.strip():
            parts.append(f"### From plugin {plugin}\n{text.strip()}")
    return "\n\n".join(parts)


def base_prompt(ctx: RunContext[CoDeps]) -> str:
    """The system prompt's first part: a short one for small local models (``co_small``)."""
    return SMALL_PROMPT if getattr(ctx.model, "co_small", False) else SYSTEM_PROMPT


def load_tools(host: PluginHost, warn: Callable[[str], None]) -> list[Tool[CoDeps]]:
    """Import every declared tool; one that fails to import is named and skipped."""
    tools: list[Tool[CoDeps]] = []
    for spec in host.tools():
        try:
            tool = Tool(
                spec.load(),
                name=spec.name,
                max_retries=spec.retries,
                sequential=spec.risk in SIDE_EFFECTS,
                metadata={"plugin": spec.plugin, "risk": spec.risk},
            )
        except Exception as exc:  # a broken tool must not take Co down
            warn(
                f"tool {spec.name!r} of plugin {spec.plugin!r} skipped: {type(exc).__name__}: {exc}"
            )
            continue
        unknown = set(spec.roles or ()) - {
            p.name for p in params_of(tool.tool_def.parameters_json_schema)
        }
        if unknown:  # a typo in a declaration: said once, the rest of the tool works
            warn(
                f"tool {spec.name!r} of plugin {spec.plugin!r} declares roles for arguments it "
                f"does not take: {', '.join(sorted(unknown))}"
            )
        tools.append(tool)
    return tools


@dataclass
class CoAgent:
    """The agent plus what a turn needs: the call pipeline and the usage limits."""

    agent: Agent[CoDeps, str]
    calls: CallPipeline
    limits: UsageLimits
    capabilities: CapabilityGroup  # Co's own, as the agent runs them
    toolbox: Toolbox  # which tools each request carries (outside the group: other hooks)

    @property
    def specs(self) -> dict[str, ToolSpec]:
        """Every tool the policy knows (plugins' and, once listed, MCP servers')."""
        return self.calls.engine.specs


def build_agent(
    host: PluginHost,
    settings: Settings,
    pipeline: CallPipeline,
    *,
    toolsets: Sequence[Any] = (),
    fit: AbstractCapability[Any] | None = None,
    counting: Counting | None = None,
    steering: Steering | None = None,
    warn: Callable[[str], None] = lambda message: None,
    briefing: Callable[[RunContext[CoDeps]], str] | None = None,
) -> CoAgent:
    """The agent for a session; the model is given per run (``/model`` swaps it).

    ``toolsets`` are the session's other tool sources (co_core.agent.assembly.sources),
    whose tools join the policy's specs when listed; ``fit`` shapes each request to the
    model's context window (co_core.sessions), counting with ``counting``, which the
    tool budget shares; ``steering`` (co_core.agent.assembly.steering) guides the models
    too small to guide themselves; ``briefing`` is what the model is told of the user and
    the project before each request (co_core.agent.briefing: instruction files, memory).
    """
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")  # Co draws its own screen
    core = settings.core
    specs = pipeline.engine.specs
    toolbox = Toolbox(
        host,
        settings,
        specs,
        budget=core.tool_budget,
        section=settings.sections.get("sessions"),
        counting=counting or Counting(counter_for),
    )
    pipeline.guard = guard = LoopGuard(toolbox.blocked_call)
    pipeline.offered = toolbox.offered
    pipeline.listen(toolbox.hear)
    pipeline.listen(guard)
    capabilities: list[AbstractCapability[Any]] = [
        *tracing_capabilities(),  # outermost: a call's span holds its policy decision
        PolicyGate(pipeline, specs if core.text_tool_calls else None),
    ]
    if steering is not None:  # inside the gate: it hears the calls' verdicts
        capabilities.append(steering.capability(toolbox, pipeline))
    capabilities.append(RequestDeadline(core.request_timeout))
    if fit is not None:
        capabilities.append(fit)
    tools = load_tools(host, warn)
    for name in set(specs) - {tool.name for tool in tools}:
        del specs[name]  # failed to import: the policy must not know it as a tool
    specs[FIND_TOOLS] = find_tools_spec()
    agent: Agent[CoDeps, str] = Agent(
        None,
        name="co",
        deps_type=CoDeps,
        instructions=[
            base_prompt,
            plugin_instructions(host, settings),
            *([briefing] if briefing is not None else []),
        ],
        tools=tools,
        toolsets=list(toolsets),
        retries={"tools": core.retries, "output": core.retries},
        capabilities=[toolbox, group := CapabilityGroup(capabilities)],
        defer_model_check=True,
    )
    limits = UsageLimits(request_limit=core.request_limit)
    return CoAgent(agent, pipeline, limits, group, toolbox)
