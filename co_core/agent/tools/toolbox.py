"""Which tools each model request carries: only tools that can work, within a budget.

A pydantic-ai capability. Before every request (``prepare_tools``):

1. tools of plugins that are not ready (``plugin_ready``) are left out; one line per such
   plugin in the system prompt says how to set it up;
2. if the rest fit the budget (setting ``tool_budget``, in tokens of tool schemas; by
   default an eighth of the model's context window, less for ``local``), all are sent;
3. otherwise the tools already used in this conversation and those the model asked for
   stay, the others are ranked (BM25 over name, plugin and description)
   against the user's latest words and the recent conversation, and the best that fit
   are sent, with ``find_tools`` so the model can ask for others by description.
4. for a model Co steers, the steering (co_core.steering, when it is there) says which
   tools it is offered (``admits``) and which it must be sent whatever the budget
   (``pinned``).

What was sent, and why, is kept for ``/context``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, MutableMapping
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

from co_core.agent.calls.record import Event, ToolCallRecord
from co_core.agent.tools.bm25 import BM25, query_weights, words
from co_core.kernel.deps import CoDeps
from co_core.kernel.host import PluginHost
from co_core.kernel.readiness import Readiness, readiness
from co_core.kernel.settings import Settings
from co_core.kernel.tools import ToolSpec
from co_core.sessions.counting import Counting
from co_core.sessions.tokens import context_window

FIND_TOOLS = "find_tools"
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
        target="co_core.agent.tools.toolbox:Toolbox",
        plugin="core",
        risk="read",
        permission=FIND_PERMISSION,
    )


def compact_schema(schema: Any) -> Any:
    """The same schema in fewer tokens: titles dropped, ``X | None = None`` shown as ``X``.

    Only what the model reads changes; arguments are still validated against the tool's
    own signature. A property *named* ``title`` (or ``$defs`` entry) stays: only the
    schema keyword goes (dropping the keyword once dropped a todo's ``title`` argument, so
    every call of ``add_todo(title)`` came with no title).
    """
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: compact_schema(v) for k, v in schema.items() if k != "title"}
    for names in ("properties", "$defs"):  # maps of names, not schemas: keep every name
        if isinstance(schema.get(names), dict):
            out[names] = {k: compact_schema(v) for k, v in schema[names].items()}
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
    # For a small model: the tools Co's routing makes it call for these words
    # (co_core.steering), carried whatever the budget; and whether it is offered a tool
    # at all for these words (model, words, tool name).
    pinned: Callable[[str], Iterable[str]] | None = field(default=None, repr=False)
    admits: Callable[[Any, str, str], bool] | None = field(default=None, repr=False)
    last: Selection | None = None
    only: frozenset[str] | None = None  # this turn's tools, when a user's command names them
    _indexes: dict[tuple[str, ...], BM25] = field(default_factory=dict, repr=False)
    _all: MutableMapping[str, ToolDefinition] = field(default_factory=dict, repr=False)
    counting: Counting = field(default_factory=Counting)  # shared with fitting and /context
    _compacted: dict[str, tuple[ToolDefinition, ToolDefinition]] = field(
        default_factory=dict, repr=False
    )
    _toolset: FunctionToolset[CoDeps] | None = field(default=None, repr=False)

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
        if not lines or getattr(ctx.model, "co_small", False):
            return ""  # a steered model would retell it anywhere; Co answers setup itself
        return (
            "### Not set up\n"
            "These tools are not available until the user sets them up; if asked for what "
            "they do, say so and give the command:\n" + "\n".join(lines)
        )

    # -- find_tools ----------------------------------------------------------------------

    def get_toolset(self) -> Any:
        # made once: pydantic-ai asks again on every run whose capabilities change for the
        # run (tracing's do), and each new Tool builds its JSON schema again (~1 ms)
        if self._toolset is None:
            tool = Tool(
                self.find_tools, name=FIND_TOOLS, metadata={"plugin": "core", "risk": "read"}
            )
            self._toolset = FunctionToolset([tool])
        return self._toolset

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
        window = self.counting.counter(model).effective(context_window(model, self.section))
        return max(MIN_BUDGET, window // WINDOW_SHARE)

    async def prepare_tools(
        self, ctx: RunContext[CoDeps], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        for tool_def in tool_defs:
            self._all[tool_def.name] = tool_def
        if self.only is not None:
            tool_defs = [d for d in tool_defs if d.name in self.only]
        # A steered model does not search for tools (Co picks them: co_core.steering), and
        # gets only the tools the steering admits.
        small = getattr(ctx.model, "co_small", False)
        prompt = latest_prompt(ctx.messages)
        offered = [
            self._compact(d)
            for d in tool_defs
            if d.name == FIND_TOOLS
            or (
                self.blocked_call(d.name) is None
                and (self.admits is None or self.admits(ctx.model, prompt, d.name))
            )
        ]
        plain = [d for d in offered if d.name != FIND_TOOLS]
        finder = [] if small else [d for d in offered if d.name == FIND_TOOLS]
        # counted as the model reads them, by the counter the fitting uses (tools_text
        # rendered for the local model, JSON schemas for others)
        counter = self.counting.counter(ctx.model)
        counts = await counter.count([counter.tool_text(d) for d in offered])
        cost = {d.name: n + counter.tool_frame for d, n in zip(offered, counts, strict=True)}
        budget = self.budget_for(ctx.model)
        total = sum(cost[d.name] for d in plain)
        if total <= budget:
            self.last = Selection(budget, [d.name for d in plain], total, len(plain), total, False)
            return plain
        routed = set(self.pinned(latest_prompt(ctx.messages))) if small and self.pinned else set()
        keep = (used_tools(ctx.messages) | self.wanted | routed) & set(cost)
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

    def offered(self, name: str) -> bool:
        """Was ``name`` sent with the current request? (A call of a tool that was not is
        answered "offered from the next step", and the model is not blamed for it.)"""
        return self.last is None or name in self.last.sent

    def hear(self, event: Event, record: ToolCallRecord) -> None:
        """A call of a ready tool the model was not sent: offer it from the next step."""
        if event == "seen" and not self.offered(record.tool):
            self.note_call(record.tool)

    def _compact(self, tool_def: ToolDefinition) -> ToolDefinition:
        """The tool as the model reads it (compacted once per definition, not per request)."""
        known = self._compacted.get(tool_def.name)
        if known is None or known[0] != tool_def:
            known = (tool_def, _compact(tool_def))
            self._compacted[tool_def.name] = known
        return known[1]

    def effect(self, name: str) -> str | None:
        """What a call of ``name`` does, as its tool declares (``risk``); None: unknown."""
        spec = self.specs.get(name)
        return spec.risk if spec is not None else None

    def spec(self, name: str) -> ToolSpec | None:
        """The tool as its plugin (or MCP server) declared it; None: unknown."""
        return self.specs.get(name)

    def tool_description(self, name: str) -> str:
        """What the model reads of the tool (its docstring)."""
        tool_def = self._all.get(name)
        return (tool_def.description or "") if tool_def is not None else ""

    def plugin(self, name: str) -> str | None:
        """The plugin (or MCP server) a tool comes from; None: unknown."""
        spec = self.specs.get(name)
        return spec.plugin if spec is not None else None

    def blocked_call(self, name: str) -> str | None:
        """Why a call of ``name`` cannot work (its plugin is not set up), or None."""
        spec = self.specs.get(name)
        return self.ready.blocks(spec) if spec is not None else None

    def note_call(self, name: str) -> None:
        """The model called a ready tool it was not sent: offer it from the next step."""
        if name in self._all and self.blocked_call(name) is None and name != FIND_TOOLS:
            self.wanted.add(name)

    def doc_words(self, name: str) -> set[str]:
        """The words a tool is ranked on (its name and description)."""
        tool_def = self._all.get(name)
        return set(self._words(tool_def)) if tool_def is not None else set()

    def parameters(self, name: str) -> dict[str, Any]:
        """The JSON schema of a tool's parameters (empty: unknown)."""
        tool_def = self._all.get(name)
        return dict(tool_def.parameters_json_schema) if tool_def is not None else {}

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
        # Not the parameter names: "code", "add" or "archive" in a sentence does not ask
        # for run_python or label_email.
        spec = self.specs.get(tool_def.name)
        name_words = words(tool_def.name)
        return [
            *name_words,
            *name_words,  # the name counts twice: it says most in fewest words
            *words(spec.plugin if spec is not None else ""),
            *words(_first_paragraph(tool_def.description)),
        ]

    # -- /context ------------------------------------------------------------------------

    def describe(self, carried: tuple[list[str], int] | None = None) -> str:
        """``/context``'s lines about tools: the budget, what was sent, what is not offered.

        ``carried`` is what the last request really carried (names, tokens), when Co knows
        it: a tiny model's guide may narrow the selection to the one tool it must call."""
        lines = []
        last = self.last
        if last is None:
            lines.append("tools: nothing sent yet")
        else:
            how = "ranked against your words" if last.ranked else "all fit"
            sent, tokens = carried if carried is not None else (last.sent, last.sent_tokens)
            if carried is not None and set(sent) < set(last.sent):
                how += f"; of {len(last.sent)} chosen, the model was given these"
            plain = [n for n in sent if n != FIND_TOOLS]
            extra = " and find_tools" if len(plain) < len(sent) else ""
            lines.append(
                f"tools: {len(plain)} of {last.ready} sent{extra}, {tokens:,} of "
                f"{last.budget:,} tokens of budget ({how}; tool_budget setting)"
            )
            lines.append("  sent: " + (", ".join(sent) or "none"))
        for line in self.ready.lines():
            lines.append(f"  not offered: {line[2:]}")
        return "\n".join(lines)


def _compact(tool_def: ToolDefinition) -> ToolDefinition:
    return dataclasses.replace(
        tool_def, parameters_json_schema=compact_schema(tool_def.parameters_json_schema)
    )


def _first_paragraph(text: str | None) -> str:
    """What a tool does, without its ``Args:`` section (parameter names and their help)."""
    return (text or "").strip().split("\n\n")[0]


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n")[0]
