"""Which tools each model request carries: only tools that can work, within a budget.

A pydantic-ai capability. Before every request (``prepare_tools``):

1. tools of plugins that are not ready (``plugin_ready``) are left out; one line per such
   plugin in the system prompt says how to set it up;
2. if the rest fit the budget (setting ``tool_budget``, in tokens of tool schemas; by
   default an eighth of the model's context window, less for ``local``), all are sent;
3. otherwise the tools already used in this conversation and those the model asked for
   stay, the others are ranked (BM25 over name, plugin, description and parameter names)
   against the user's latest words and the recent conversation, and the best that fit
   are sent, with ``find_tools`` so the model can ask for others by description.

What was sent, and why, is kept for ``/context``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import FunctionToolset

from co_core.agent.bm25 import BM25, query_weights, words
from co_core.agent.calls import CallLog
from co_core.agent.gate import call_args
from co_core.kernel.deps import CoDeps
from co_core.kernel.host import PluginHost
from co_core.kernel.readiness import Readiness, readiness
from co_core.kernel.settings import Settings
from co_core.kernel.tools import ToolSpec
from co_core.sessions.tokens import context_window, tools_tokens

FIND_TOOLS = "find_tools"
NOT_SENT = "{tool} was not offered in this step; it is offered from the next one"
FIND_PERMISSION = "co:find_tools"
WINDOW_SHARE = 8  # the default budget is 1/8 of the context window
MIN_BUDGET = 400
FOUND_AT_MOST = 3  # tools one find_tools call adds
RECENT_MESSAGES = 6  # earlier messages whose words also rank tools (at a lower weight)
RECENT_WEIGHT = 0.4


def find_tools_spec() -> ToolSpec:
    """``find_tools`` as the policy knows it: a read-only core tool, always allowed."""
    return ToolSpec(
        name=FIND_TOOLS,
        target="co_core.agent.toolbox:Toolbox",
        plugin="core",
        risk="read",
        permission=FIND_PERMISSION,
    )


def compact_schema(schema: Any) -> Any:
    """The same schema in fewer tokens: titles dropped, ``X | None = None`` shown as ``X``.

    Only what the model reads changes; arguments are still validated against the tool's
    own signature.
    """
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: compact_schema(v) for k, v in schema.items() if k != "title"}
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = next(o for o in options if o != {"type": "null"})
        out.pop("anyOf")
        if out.get("default", 0) is None:
            out.pop("default")
        out = {**other, **out}
    return out


@dataclass
class Selection:
    """What the last request carried."""

    budget: int
    sent: list[str]
    sent_tokens: int
    ready: int  # tools that can work (offered, or could be)
    ready_tokens: int
    ranked: bool  # False: every ready tool fit the budget


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(c for c in content if isinstance(c, str))
    return ""


def latest_prompt(messages: list[Any]) -> str:
    """The user's latest words."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            prompts = [p for p in message.parts if isinstance(p, UserPromptPart)]
            if prompts:
                return _text_of(prompts[-1].content)
    return ""


def conversation_words(messages: list[Any]) -> dict[str, float]:
    """Query words: the latest user prompt at full weight, recent messages lower."""
    texts: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            texts += [_text_of(p.content) for p in message.parts if isinstance(p, UserPromptPart)]
        elif isinstance(message, ModelResponse):
            texts += [p.content for p in message.parts if isinstance(p, TextPart)]
    latest = latest_prompt(messages)
    recent = [t for t in texts[-RECENT_MESSAGES:] if t != latest]
    return query_weights(*((t, RECENT_WEIGHT) for t in recent), (latest, 1.0))


def used_tools(messages: list[Any]) -> set[str]:
    return {
        part.tool_name
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    }


@dataclass
class Toolbox(AbstractCapability[CoDeps]):
    """Chooses the tools of every request; gives the model ``find_tools``."""

    host: PluginHost
    settings: Settings
    specs: Mapping[str, ToolSpec]  # every tool the policy knows (MCP tools join when listed)
    budget: int | None = None  # setting ``tool_budget``; None: from the model
    section: Any = None  # the ``sessions`` settings (``context_window``)
    ready: Readiness = field(default_factory=Readiness)
    wanted: set[str] = field(default_factory=set)  # asked for (find_tools, or called unsent)
    calls: CallLog | None = None  # to close the records of calls of tools not sent
    unsent: set[str] = field(default_factory=set)  # ids of such calls
    last: Selection | None = None
    _indexes: dict[tuple[str, ...], BM25] = field(default_factory=dict, repr=False)
    _all: MutableMapping[str, ToolDefinition] = field(default_factory=dict, repr=False)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def refresh(self) -> Readiness:
        """Ask the plugins again (cheap: files and settings only)."""
        self.ready = readiness(self.host, self.settings)
        return self.ready

    async def for_run(self, ctx: RunContext[CoDeps]) -> AbstractCapability[CoDeps]:
        self.refresh()  # a `co google login` in another terminal counts from the next turn
        return self

    # -- the system prompt ----------------------------------------------------------------

    def get_instructions(self) -> Any:
        return self.setup_instructions

    def setup_instructions(self, ctx: RunContext[CoDeps]) -> str:
        lines = self.ready.lines()
        if not lines:
            return ""
        return (
            "### Not set up\n"
            "These tools are not available until the user sets them up; if asked for what "
            "they do, say so and give the command:\n" + "\n".join(lines)
        )

    # -- find_tools ----------------------------------------------------------------------

    def get_toolset(self) -> Any:
        return FunctionToolset(
            [Tool(self.find_tools, name=FIND_TOOLS, metadata={"plugin": "core", "risk": "read"})]
        )

    def find_tools(self, query: str) -> str:
        """Find more tools by what they do; they are offered from your next step.

        Args:
            query: what the tool should do, e.g. "read a file".
        """
        wanted = query_weights((query, 1.0))
        found: list[str] = []
        setup: list[str] = []
        for name, _score in self._rank(wanted, list(self._all.values())):
            spec = self.specs.get(name)
            why = self.ready.blocks(spec) if spec is not None else None
            if why is not None:
                setup.append(f"{name}: not set up: {why}")
            elif name != FIND_TOOLS and len(found) < FOUND_AT_MOST:
                self.wanted.add(name)
                found.append(f"{name}: {_first_line(self._all[name].description)}")
        if not found and not setup:
            return f"No tool matches {query!r}."
        lines = ["Offered from your next step:", *found] if found else []
        return "\n".join(lines + setup[:FOUND_AT_MOST])

    # -- each request --------------------------------------------------------------------

    def budget_for(self, model: Any) -> int:
        if self.budget is not None:
            return self.budget
        hint = getattr(model, "co_tool_budget", None)
        if isinstance(hint, int):
            return hint
        return max(MIN_BUDGET, context_window(model, self.section) // WINDOW_SHARE)

    async def prepare_tools(
        self, ctx: RunContext[CoDeps], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        for tool_def in tool_defs:
            self._all[tool_def.name] = tool_def
        offered = [
            _compact(d)
            for d in tool_defs
            if d.name == FIND_TOOLS or self.blocked_call(d.name) is None
        ]
        plain = [d for d in offered if d.name != FIND_TOOLS]
        # A tiny model does not search for tools (Co picks them: co_core.agent.guide).
        small = getattr(ctx.model, "co_small", False)
        finder = [] if small else [d for d in offered if d.name == FIND_TOOLS]
        measure = getattr(ctx.model, "co_tool_tokens", None) or (lambda d: tools_tokens([d]))
        cost = {d.name: int(measure(d)) for d in offered}
        budget = self.budget_for(ctx.model)
        total = sum(cost[d.name] for d in plain)
        if total <= budget:
            self.last = Selection(budget, [d.name for d in plain], total, len(plain), total, False)
            return plain
        keep = (used_tools(ctx.messages) | self.wanted) & set(cost)
        room = budget - sum(cost[d.name] for d in finder) - sum(cost[n] for n in keep)
        chosen = set(keep)
        rest = [d for d in plain if d.name not in keep]
        for name, _score in self._rank(conversation_words(ctx.messages), rest):
            if cost[name] <= room:
                chosen.add(name)
                room -= cost[name]
        sent = [d for d in plain if d.name in chosen] + finder
        self.last = Selection(
            budget,
            [d.name for d in sent],
            sum(cost[d.name] for d in sent),
            len(plain),
            total,
            True,
        )
        return sent

    async def after_model_request(
        self, ctx: RunContext[CoDeps], *, request_context: Any, response: ModelResponse
    ) -> ModelResponse:
        sent = set(self.last.sent) if self.last is not None else set()
        for part in response.parts:
            if isinstance(part, ToolCallPart) and part.tool_name not in sent:
                self.note_call(part.tool_name)
                if self.calls is not None and part.tool_name in self.specs:
                    # pydantic-ai answers "unknown tool"; the record says why, and the
                    # call does not count as the model's failure (co_core.agent.loops)
                    record = self.calls.seen(part.tool_call_id, part.tool_name, call_args(part))
                    self.calls.finish(record, "retry", NOT_SENT.format(tool=part.tool_name))
                    self.unsent.add(part.tool_call_id)
        return response

    def blocked_call(self, name: str) -> str | None:
        """Why a call of ``name`` cannot work (its plugin is not set up), or None."""
        spec = self.specs.get(name)
        return self.ready.blocks(spec) if spec is not None else None

    def note_call(self, name: str) -> None:
        """The model called a ready tool it was not sent: offer it from the next step."""
        if name in self._all and self.blocked_call(name) is None and name != FIND_TOOLS:
            self.wanted.add(name)

    def rank_all(self, query: Mapping[str, float]) -> list[tuple[str, float]]:
        """Every tool seen (offered or not, set up or not) against ``query``, best first."""
        return self._rank(query, [d for d in self._all.values() if d.name != FIND_TOOLS])

    def _rank(
        self, query: Mapping[str, float], defs: list[ToolDefinition]
    ) -> list[tuple[str, float]]:
        index = self._index_of(defs)
        return index.ranked(query)

    def _index_of(self, defs: list[ToolDefinition]) -> BM25:
        key = tuple(d.name for d in defs)
        if key not in self._indexes:
            if len(self._indexes) > 32:
                self._indexes.clear()
            self._indexes[key] = BM25({d.name: self._words(d) for d in defs})
        return self._indexes[key]

    def _words(self, tool_def: ToolDefinition) -> list[str]:
        spec = self.specs.get(tool_def.name)
        params = (tool_def.parameters_json_schema or {}).get("properties", {})
        name_words = words(tool_def.name)
        return [
            *name_words,
            *name_words,  # the name counts twice: it says most in fewest words
            *words(spec.plugin if spec is not None else ""),
            *words(tool_def.description or ""),
            *words(" ".join(params)),
        ]

    # -- /context ------------------------------------------------------------------------

    def describe(self) -> str:
        """``/context``'s lines about tools: the budget, what was sent, what is not offered."""
        lines = []
        last = self.last
        if last is None:
            lines.append("tools: nothing sent yet")
        else:
            how = "ranked against your words" if last.ranked else "all fit"
            plain = [n for n in last.sent if n != FIND_TOOLS]
            extra = " and find_tools" if len(plain) < len(last.sent) else ""
            lines.append(
                f"tools: {len(plain)} of {last.ready} sent{extra}, {last.sent_tokens:,} of "
                f"{last.budget:,} tokens of budget ({how}; tool_budget setting)"
            )
            lines.append("  sent: " + (", ".join(last.sent) or "none"))
        for line in self.ready.lines():
            lines.append(f"  not offered: {line[2:]}")
        return "\n".join(lines)


def _compact(tool_def: ToolDefinition) -> ToolDefinition:
    return dataclasses.replace(
        tool_def, parameters_json_schema=compact_schema(tool_def.parameters_json_schema)
    )


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n")[0]
