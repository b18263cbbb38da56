"""Calls the user makes himself: ``!cmd`` runs a command, ``@path`` reads a file or lists
a folder, ``/init`` writes the instructions file it drafted.

Each is a call of an installed tool (co_core.agent.tools.kinds chooses it by what it
declares) driven through the session's call pipeline exactly like a model's call: seen,
resolved by the tool's resolver (the canonical path, the command as Co spells it),
decided by the policy (and the user's ``before_tool`` hooks), and run by the tool with
exactly those arguments, in its sandbox; the audit trail and the traces say so. One
thing differs: the user typed ``!cmd`` and ``@path`` himself, so a call the policy would
ask about is not asked about again. The typing was the yes (its ``answer`` line says
``source: typed``, and no grant is kept from it). A deny holds, with its reason. A write
Co drafted (``/init``) is asked about like any write.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from co_core.agent.frontend import Answer
from co_core.agent.tools.kinds import Chosen, Job, choose

if TYPE_CHECKING:
    from co_core.agent.calls.record import ToolCallRecord
    from co_core.agent.conversation import Conversation

TYPED = "typed at the prompt"


@dataclass(frozen=True)
class Done:
    """How a typed call went: ``ok`` (it ran and succeeded), the tool's text (or why it
    did not run), and its record."""

    ok: bool
    text: str
    record: ToolCallRecord | None
    tool: str

    @property
    def status(self) -> str:
        return self.record.status if self.record is not None else "refused"

    @property
    def ran(self) -> bool:
        return self.record is not None and self.record.status in ("ok", "retry", "error")


def tool_for(conversation: Conversation, job: Job) -> Chosen:
    """The session's one tool for ``job`` (NoTool says why there is none)."""
    co = conversation.ready()
    specs = [s for name, s in co.specs.items() if co.toolbox.blocked_call(name) is None]
    return choose(specs, job, co.calls.engine.prefixes)


def result_text(value: Any) -> str:
    """A tool's return value as the text the user and the model read."""
    display = getattr(value, "display", None)
    if isinstance(display, str):
        return display
    return value if isinstance(value, str) else str(value)


async def call(
    conversation: Conversation, chosen: Chosen, args: dict[str, Any], *, typed: bool = True
) -> Done:
    """Drive one call of ``chosen`` through the pipeline; never raises for the tool's
    failure or a denial (they come back as ``Done``)."""
    from pydantic import ValidationError
    from pydantic_ai import Tool
    from pydantic_ai.toolsets import FunctionToolset

    from co_core.agent.calls.outcome import outcome

    co = conversation.ready()
    deps = conversation.deps
    pipeline = co.calls
    spec = chosen.spec
    toolset = FunctionToolset([Tool(spec.load(), name=spec.name, max_retries=spec.retries)])
    ctx = _context(conversation, deps)
    tool = (await toolset.get_tools(ctx))[spec.name]
    offered, pipeline.offered = pipeline.offered, None  # the user chose it: not the toolbox
    try:
        record = pipeline.open(
            f"{'typed' if typed else 'co'}-{uuid.uuid4().hex[:12]}", spec.name, args
        )
    finally:
        pipeline.offered = offered
    if record.ended:
        return Done(False, str(record.result), record, spec.name)
    try:
        checked = tool.args_validator.validate_python(args)
    except ValidationError as invalid:
        pipeline.end(record, *(outcome(invalid) or ("retry", str(invalid))))
        return Done(False, str(record.result), record, spec.name)
    if not pipeline.resolve(record, checked, deps):
        return Done(False, str(record.result), record, spec.name)
    decision = await pipeline.decide(record)
    if not decision.allowed:
        if decision.effect == "deny":
            pipeline.deny(record, f"Denied by policy: {decision.reason}")
        elif typed:
            pipeline.answer(record, Answer(True, TYPED, "once", by="typed"))
        else:
            await pipeline.settle([record])
            if record.stage == "answered" and not pipeline.confirm(record, checked, deps):
                return Done(False, str(record.result), record, spec.name)
        if record.ended:
            return Done(False, str(record.result), record, spec.name)

    async def run(canonical: dict[str, Any]) -> Any:
        return await toolset.call_tool(
            spec.name,
            canonical,
            replace(ctx, tool_name=spec.name, tool_call_id=record.call_id),
            tool,
        )

    try:
        value = await pipeline.execute(record, run)
    except Exception:
        return Done(False, str(record.result), record, spec.name)
    return Done(True, result_text(value), record, spec.name)


def _context(conversation: Conversation, deps: Any) -> Any:
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    model = conversation.model_object or TestModel()  # no model runs: RunContext needs one
    return RunContext(deps=deps, model=model, usage=RunUsage())
