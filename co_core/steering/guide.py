"""Co steers a model too small to steer itself (the built-in SmolLM2, or any llama.cpp or
Ollama model under ``steering.small_below``; co_core.agent.small).

A tiny model rarely decides on its own to call a tool, cannot fill in a call's arguments
from scratch, and loses its question in a long result. For a model Co steers
(``co_small``), each turn goes:

1. **First request**: Co routes the user's words (co_core.steering.route): it answers
   itself when the tool is not set up, when the tool would write, send or execute and the
   words did not ask for that, when the words do not give what such a tool needs (it
   asks for it), and when no tool can do what is asked; it makes the model call the one
   tool the words clearly ask for (its values copied from the words:
   co_core.steering.values, sent as the call's JSON schema), or one of the few that match
   about as well; otherwise the model answers freely, with only the tools whose effect
   was asked for.
2. **After a call**: the model reads the result (the lines that answer the question, when
   it is long) and writes the answer in words (a grammar keeps it from writing a call as
   text). One more call is allowed when the result calls for it: after a failed call (to
   fix it), or after a listing or a search that found something but not what was asked
   (to read it with a tool of the same plugin that reads, not to list again).
3. A call that was denied, or whose plugin is not set up, is answered by Co with the
   reason; so are two failed calls, and a write or a send that was made (the tool's
   own line says what was done). An answer that is empty, or does not repeat what the
   result's best-matching line says (co_core.steering.grounding), is replaced by the
   lines of the result that match the question.

Everything Co knows of a tool here is what it declares (what it does, its arguments'
roles, its resolver: co_core.steering.contracts). Larger models never see any of this.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.tools import ToolDefinition

from co_core.agent.calls.pipeline import CallPipeline
from co_core.agent.calls.record import ToolCallRecord
from co_core.agent.local.constrained import ARGUMENTS
from co_core.agent.tools.bm25 import words
from co_core.agent.tools.toolbox import FIND_TOOLS, Toolbox, latest_prompt
from co_core.kernel.deps import CoDeps
from co_core.steering.contracts import Contract, contract_of
from co_core.steering.grounding import excerpt, grounded
from co_core.steering.intent import SMALL, Intent, read_intent
from co_core.steering.known import narrowed
from co_core.steering.lexicon import REQUEST_WORDS
from co_core.steering.route import Route, about, ask_back, route
from co_core.steering.values import Reading, spans_left

MAX_CALLS = 2  # calls a steered model makes per turn: the one asked for, and one follow-up
# A write or a send needs no retelling: the tool's own line says what was done (a small
# model retelling "set port = 8088" may add that the request "was denied").
CONFIRMED = ("writes", "sends")


def is_small(model: Any) -> bool:
    return bool(getattr(model, "co_small", False))


def shown(record: ToolCallRecord) -> str:
    """What a call came to, as Co says it: the tool's display text, or why it did not run."""
    result = record.result
    if record.status == "ok":
        display = getattr(result, "display", None)
        return display if isinstance(display, str) else str(result)
    if record.status == "denied":
        return str(result)
    return f"{record.tool} failed: {result}"


def _text(response: Any) -> str:
    parts = getattr(response, "parts", [])
    return "".join(p.content for p in parts if isinstance(p, TextPart)).strip()


def _calls(response: Any) -> bool:
    return any(getattr(p, "part_kind", "") == "tool-call" for p in getattr(response, "parts", []))


@dataclass
class SmallModelGuide(AbstractCapability[CoDeps]):
    toolbox: Toolbox
    calls: CallPipeline
    last_route: Route | None = field(default=None, repr=False)  # for /context and tests

    def __post_init__(self) -> None:
        self.toolbox.pinned = self.routed  # the toolbox carries what routing will force
        self.toolbox.admits = self.admits  # and only tools whose effect was asked for

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def contract(self, name: str) -> Contract:
        return contract_of(self.toolbox, name)

    def admits(self, model: Any, prompt: str, name: str) -> bool:
        """Is a steered model offered ``name`` for ``prompt``? Only a tool whose effect the
        words ask for with a verb: it never gets the chance to change something nobody
        asked it to change. (Any model Co does not steer: every tool.)"""
        if not is_small(model):
            return True
        said = words(name)
        return read_intent(prompt).asks(
            self.toolbox.effect(name), about(self.toolbox, name), verb=said[0] if said else ""
        )

    def routed(self, prompt: str) -> tuple[str, ...]:
        """The tools the routing makes a small model call for ``prompt`` (none when the
        model answers freely, or Co answers)."""
        chosen = route(read_intent(prompt), self.toolbox)
        return chosen.tools if chosen.kind in ("call", "among") else ()

    async def wrap_model_request(
        self, ctx: RunContext[CoDeps], *, request_context: Any, handler: Any
    ) -> Any:
        if not is_small(request_context.model):
            return await handler(request_context)
        prompt = latest_prompt(ctx.messages)
        ended = [r for r in self.calls.records.values() if r.ended and r.tool != FIND_TOOLS]
        if not ended:
            answer = self._route(request_context, prompt, ctx)
            if answer is not None:
                return _said(answer)
            return await handler(request_context)
        settled = self._settled(ended, prompt)
        if settled is not None:
            return _said(settled)
        params = request_context.model_request_parameters
        follow_up = self._follow_up(ended, read_intent(prompt))
        again = self._again(ended)
        avoid = carried_values(ended[-1:])
        if again:  # made again only with other words than the ones that failed
            again = {
                t.name
                for t in params.function_tools
                if t.name in again
                and spans_left(self._reading(t, t.parameters_json_schema, prompt, avoid))
            }
            if not again:  # the words give nothing else to try: Co says what happened
                return _said(shown(ended[-1]))
        tools = [t for t in params.function_tools if t.name in (again or follow_up)]
        if again:
            tools = self._forced(tools, ctx, prompt, avoid)
        elif tools:  # what it read next is named in what it found: "1. Health/Dentist.md"
            tools = self._named(tools, ctx, shown(ended[-1]))
        request_context.model_request_parameters = dataclasses.replace(
            params, function_tools=tools, allow_text_output=not again
        )
        response = await handler(request_context)
        if _calls(response):
            return response
        results = [shown(r) for r in ended if r.status == "ok"]
        done = [r for r in ended if r.status == "ok"]
        about, carried = self._about(prompt, done), carried_values(done)
        if not _text(response) or not grounded(_text(response), results, prompt, about, carried):
            # said nothing, or not what the result says: Co shows the lines that answer
            return _said(excerpt(results, prompt) or "\n\n".join(shown(r) for r in ended))
        return response

    def _again(self, ended: list[ToolCallRecord]) -> set[str]:
        """When a call Co made the model make failed, or searched for words that found
        nothing ("again" of "What's the wifi password again?"): it calls once more, one of
        the other tools it chose from if there were several (that one had its chance), its
        values again copied from the words but never the ones that just failed or found
        nothing; when the words give no others, Co says what the call came to."""
        last, chosen = ended[-1], self.last_route
        if len(ended) >= MAX_CALLS or not (last.status == "retry" or self.found_nothing(last)):
            return set()
        if chosen is None or chosen.kind not in ("call", "among") or last.tool not in chosen.tools:
            return set()
        return set(chosen.tools) - {last.tool} or {last.tool}  # among: another one now

    def found_nothing(self, record: ToolCallRecord) -> bool:
        """A search that ran and found nothing, nor offered anything close
        (``ToolResult.found_nothing``)."""
        return (
            record.status == "ok"
            and self.contract(record.tool).does == "searches"
            and getattr(record.result, "found_nothing", False) is True
        )

    def _follow_up(self, ended: list[ToolCallRecord], intent: Intent) -> set[str]:
        """The tools a steered model may call after ``ended``: after a failed call, any it
        was offered (it may fix the call); after a listing or a search that does not hold
        what the user asked about, the same plugin's tools that read (to read what it
        found: a file it listed, a note it found); otherwise none: it answers in words.
        The words the call itself carried (the search's query) are no sign that the
        result holds the answer: every hit repeats them."""
        if len(ended) >= MAX_CALLS:
            return set()
        last = ended[-1]
        offered = set(self.toolbox.last.sent) if self.toolbox.last is not None else set()
        if last.status != "ok":
            return offered
        if self.contract(last.tool).does not in ("lists", "searches"):
            return set()
        if getattr(last.result, "count", None) == 0:
            return set()  # nothing found: nothing to read
        carried = set(words(" ".join(str(v) for v in last.asked.values())))
        asked = set(intent.words) - self.toolbox.doc_words(last.tool) - carried
        found = set(words(shown(last)))
        if not asked or asked & found:
            return set()  # the listing was what was asked, or it holds the answer
        plugin = self.toolbox.plugin(last.tool)
        return {
            name
            for name in offered - {last.tool}
            if self.contract(name).does == "reads" and self.toolbox.plugin(name) == plugin
        }

    def _about(self, question: str, records: list[ToolCallRecord]) -> list[str]:
        """What the question asks of the results, most narrowly first: without what the
        calls carried (the note read, the words searched: every line about it repeats
        them) and the words that named the tools ("in my notes"); without the latter."""
        said = {w for r in records for w in self.toolbox.doc_words(r.tool)}

        def untold(text: str) -> str:
            return " ".join(w for w in text.split() if not set(words(w)) & said)

        return [untold(unsaid(question, records)), untold(question)]

    def _settled(self, ended: list[ToolCallRecord], prompt: str) -> str | None:
        """Co's own answer when the calls leave nothing for the model to read."""
        for record in ended:
            if record.status == "denied":
                return shown(record)
            why = self.toolbox.blocked_call(record.tool)
            if why is not None:
                return why[:1].upper() + why[1:]
        if len(ended) >= MAX_CALLS and all(r.status != "ok" for r in ended):
            return "\n\n".join(shown(r) for r in ended)
        if all(r.status == "ok" and self.contract(r.tool).does in CONFIRMED for r in ended):
            return "\n\n".join(shown(r) for r in ended)  # what was done, as the tool says it
        if self._listing_asked(ended, prompt):
            return shown(ended[-1])  # the list that was asked for, as the tool lists it
        return None

    def _listing_asked(self, ended: list[ToolCallRecord], prompt: str) -> bool:
        """Was a listing all the words asked for ("List my bookmarks"): one call Co routed
        to a tool that lists, which found something, the words saying nothing beyond the
        tool's own words? Then the answer is the list itself (a tiny model retelling it
        drops items). Of close tools (``among``), the one that ran must be one that lists;
        words that only ask ("show", "check") say nothing beyond it."""
        chosen, last = self.last_route, ended[-1]
        if len(ended) != 1 or last.status != "ok" or chosen is None:
            return False
        if chosen.kind not in ("call", "among") or last.tool not in chosen.tools:
            return False
        if self.contract(last.tool).does != "lists" or getattr(last.result, "count", 1) == 0:
            return False
        intent = read_intent(prompt)
        said = set(intent.words) - REQUEST_WORDS - SMALL
        return not (said - self.toolbox.doc_words(last.tool))

    def _reading(self, tool: ToolDefinition, schema: Any, words_: str, avoid: list[str]) -> Reading:
        found = self.contract(tool.name)
        return Reading.of(
            schema or {},
            name=tool.name,
            description=tool.description or "",
            roles=found.roles,
            does=found.does,
            words_=words_,
            avoid=avoid,
            plugin=found.spec.plugin if found.spec is not None else "",
            resolves=found.spec is not None and found.spec.resolve is not None,
        )

    def _named(
        self, tools: list[ToolDefinition], ctx: RunContext[CoDeps], words_: str
    ) -> list[ToolDefinition]:
        """The tools, each call's targets limited to the runs of ``words_`` (a result's)
        that name a real thing (co_core.steering.known); the model writes the rest."""
        out = []
        for tool in tools:
            found = self.contract(tool.name)
            schema = narrowed(
                tool.parameters_json_schema, found.spec, found.roles, words_, ctx.deps
            )
            if schema is not tool.parameters_json_schema:
                tool = _constrained(tool, dict(schema))
            out.append(tool)
        return out

    def _forced(
        self, tools: list[ToolDefinition], ctx: RunContext[CoDeps], words_: str, avoid: list[str]
    ) -> list[ToolDefinition]:
        """The tools as a forced call of each may be made: every value copied from the
        user's words (co_core.steering.values), names limited to what the resolver finds;
        a tool whose call needs a value the words do not give is left out. Of several
        tools, those whose resolver finds the thing the words name ("my Voquinlo stew
        recipe" is a recipe there is) are the ones the model may call, when any is."""
        out, named = [], []
        for tool in tools:
            found = self.contract(tool.name)
            schema = narrowed(
                tool.parameters_json_schema, found.spec, found.roles, words_, ctx.deps
            )
            copied = self._reading(tool, schema, words_, avoid).schema()
            if copied is None:
                continue
            out.append(_constrained(tool, copied))
            if _names_a_real_thing(tool.parameters_json_schema, schema, found.roles):
                named.append(out[-1])
        return named if 0 < len(named) < len(out) else out

    def _route(self, request_context: Any, prompt: str, ctx: RunContext[CoDeps]) -> str | None:
        chosen = self.last_route = route(read_intent(prompt), self.toolbox)
        if chosen.kind in ("ask", "setup", "decline"):
            return chosen.answer
        if chosen.kind in ("call", "among"):
            params = request_context.model_request_parameters
            offered = [t for t in params.function_tools if t.name in chosen.tools]
            tools = self._forced(offered, ctx, prompt, [])
            if offered and not tools:  # what they need, the words give for none of them
                found = self.contract(offered[0].name)
                missing = self._reading(
                    offered[0], offered[0].parameters_json_schema, prompt, []
                ).missing()
                return ask_back(found, missing or found.with_role("target"))
            if tools:
                request_context.model_request_parameters = dataclasses.replace(
                    params, function_tools=tools, allow_text_output=False
                )
        return None


def _names_a_real_thing(before: Any, after: Any, roles: Any) -> bool:
    """Did the resolver limit one of the tool's targets to the names it found?"""
    was, now = (before or {}).get("properties") or {}, (after or {}).get("properties") or {}
    return any(
        roles.get(key) == "target" and "enum" in (now.get(key) or {}) and now.get(key) != prop
        for key, prop in was.items()
    )


def _constrained(tool: ToolDefinition, arguments: dict[str, Any]) -> ToolDefinition:
    """``tool`` with the JSON schema its call's arguments must match (the model reads the
    tool's own)."""
    return dataclasses.replace(tool, metadata={**(tool.metadata or {}), ARGUMENTS: arguments})


def carried_values(records: list[ToolCallRecord]) -> list[str]:
    """The text values the calls carried (a note's name, the words searched)."""
    return [
        value
        for record in records
        for value in record.asked.values()
        if isinstance(value, str) and value.strip()
    ]


def unsaid(question: str, records: list[ToolCallRecord]) -> str:
    """The question without the values the calls carried."""
    for value in carried_values(records):
        question = question.replace(value, " ")
    return question


def _said(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)], model_name="co")
