"""One pipeline for every call: the agent (policy gate) and ``co mcp serve`` drive the same
steps, so the same failing tool ends with the same record whichever way it was called.

Real agent (pydantic-ai, a scripted FunctionModel), real ``co mcp serve`` call path, real
policy and audit; the tools of a small plugin fail each in its own way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelRetry, RunContext, ToolFailed

from co_core import CallRefused, CoDeps, Resolved, hookimpl
from co_core.agent.calls.pipeline import CallPipeline
from co_core.agent.calls.record import NEXT, StageError, ToolCallRecord
from co_core.agent.conversation import Conversation
from co_core.agent.frontend import NoTerminal
from co_core.agent.models import ResolvedModel
from co_core.kernel.tools import ToolCall
from co_core.mcp.serve import call, expose
from co_core.policy.engine import PolicyEngine
from co_core.testing import audit_entries, script_calls, scripted_model, use_plugin

pytestmark = pytest.mark.usefixtures("co_dirs")


def asks_again(ctx: RunContext[CoDeps], what: str) -> str:
    """Fails until called right."""
    raise ModelRetry(f"not like that: {what}")


def breaks(ctx: RunContext[CoDeps], what: str) -> str:
    """Crashes."""
    raise RuntimeError(f"the tool broke on {what}")


def gives_up(ctx: RunContext[CoDeps], what: str) -> str:
    """Fails for good."""
    raise ToolFailed(f"no such {what}, ever")


def too_slow(ctx: RunContext[CoDeps], what: str) -> str:
    """Takes too long."""
    raise TimeoutError(f"{what} took too long")


def counts(ctx: RunContext[CoDeps], n: int) -> str:
    """Needs a number."""
    return str(n)


def refused(ctx: RunContext[CoDeps], path: str) -> str:
    """Never gets to run."""
    return "ran"


def _outside(args: Mapping[str, object], deps: CoDeps) -> Resolved:
    raise CallRefused(f"{args['path']} is outside the workspace")


def _swapped(args: Mapping[str, object], deps: CoDeps) -> Resolved:
    raise NotADirectoryError(20, "Not a directory")  # a folder became a symlink meanwhile


def races(ctx: RunContext[CoDeps], path: str) -> str:
    """Never gets to run either."""
    return "ran"


def deletes(ctx: RunContext[CoDeps], path: str) -> str:
    """Deletes (needs approval)."""
    return "deleted"


class Failing:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        for tool in (asks_again, breaks, gives_up, too_slow):
            register(tool, risk="read", permission=f"fail:{tool.__name__}:{{what}}")
        register(counts, risk="read", permission="fail:counts")
        register(refused, risk="read", permission="fail:read:{path}", resolve=_outside)
        register(races, risk="read", permission="fail:race:{path}", resolve=_swapped)
        register(deletes, risk="write", permission="fail:delete:{path}")


CASES = [
    ("asks_again", {"what": "x"}),
    ("breaks", {"what": "x"}),
    ("gives_up", {"what": "x"}),
    ("too_slow", {"what": "x"}),
    ("counts", {"n": "not a number"}),
    ("refused", {"path": "../etc/passwd"}),
    ("races", {"path": "d/f.txt"}),
    ("deletes", {"path": "a.txt"}),
]


def _fate(record: ToolCallRecord) -> tuple[Any, ...]:
    return (*record.as_dict().items(), ("result", str(record.result)))


def through_the_agent(app: Any, tool: str, args: dict[str, Any]) -> ToolCallRecord:
    """``co ask``'s way: a turn whose model makes the call once, then answers."""
    chat = Conversation(app, frontend=NoTerminal(), headless=True)
    chat.model = ResolvedModel(scripted_model(script_calls((tool, args))), "scripted")
    chat.prepare()
    try:
        asyncio.run(chat.run_turn("go"))
    except Exception:
        pass  # a tool that crashes ends the turn; its record says how
    finally:
        chat.close()
    (record,) = chat.ready().calls.records.values()
    return record


def through_co_mcp_serve(app: Any, tool: str, args: dict[str, Any]) -> ToolCallRecord:
    engine = PolicyEngine.from_app(app, session_id="served", headless=True)
    pipeline = CallPipeline(engine, NoTerminal())
    deps = app.make_deps()
    deps.policy = engine.allows

    async def serve() -> tuple[bool, str, Any]:
        return await call(await expose(app, deps, print), pipeline, tool, args)

    try:
        ok, text, _ = asyncio.run(serve())
    finally:
        deps.close()
        engine.audit.close()  # type: ignore[union-attr]
    (record,) = pipeline.records.values()
    assert ok == (record.status == "ok") and text == str(record.result)  # what the client got
    return record


@pytest.mark.parametrize(("tool", "args"), CASES, ids=[c[0] for c in CASES])
def test_the_agent_and_co_mcp_serve_end_a_failing_call_alike(
    tmp_path: Path, tool: str, args: dict[str, Any]
) -> None:
    with use_plugin(Failing(), name="failing", cwd=tmp_path) as app:
        agent = through_the_agent(app, tool, args)
        served = through_co_mcp_serve(app, tool, args)
    assert _fate(agent) == _fate(served)
    assert agent.ended and agent.status != "ok"


def test_each_way_of_failing_has_its_status(tmp_path: Path) -> None:
    with use_plugin(Failing(), name="failing", cwd=tmp_path) as app:
        fates = {tool: through_co_mcp_serve(app, tool, args) for tool, args in CASES}
    assert {tool: (r.status, str(r.result)) for tool, r in fates.items()} == {
        "asks_again": ("retry", "not like that: x"),
        "breaks": ("error", "the tool broke on x"),
        "gives_up": ("error", "no such x, ever"),
        "too_slow": ("timed out", "x took too long"),
        "counts": (
            "retry",
            "bad arguments: n: Input should be a valid integer, unable to parse string as an "
            "integer",
        ),
        "refused": ("retry", "../etc/passwd is outside the workspace"),
        "races": (
            "retry",
            "what this call names changed while Co was resolving it (not a directory); call again",
        ),
        "deletes": (
            "denied",
            fates["deletes"].result,  # the headless denial, naming the flag that allows it
        ),
    }
    assert "--approve fail:delete:a.txt" in str(fates["deletes"].result)
    executions = [e["status"] for e in audit_entries("served", event="execution")]
    assert executions == ["retry", "error", "error", "timed out", "retry", "retry", "retry"]


def test_a_record_moves_only_forward_through_its_stages() -> None:
    record = ToolCallRecord("c1", ToolCall("t", "p", {}, "p:t", "read"))
    for stage in ("resolved", "decided", "running", "ended"):
        record.move(stage)  # type: ignore[arg-type]
    assert NEXT["ended"] == ()
    with pytest.raises(StageError, match="cannot go from ended to running"):
        record.move("running")
    fresh = ToolCallRecord("c2", ToolCall("t", "p", {}, "p:t", "read"))
    with pytest.raises(StageError, match="cannot go from seen to running"):
        fresh.move("running")  # nothing runs undecided


def test_only_an_allowed_or_approved_call_runs(tmp_path: Path) -> None:
    """The pipeline itself refuses to run a call the policy held and nobody approved."""
    with use_plugin(Failing(), name="failing", cwd=tmp_path) as app:
        engine = PolicyEngine.from_app(app, audit=False)
        pipeline = CallPipeline(engine, NoTerminal())
        deps = app.make_deps()
        ran: list[dict[str, Any]] = []

        async def run(args: dict[str, Any]) -> str:
            ran.append(args)
            return "deleted"

        record = pipeline.seen("c1", "deletes", {"path": "a.txt"})
        assert pipeline.resolve(record, {"path": "a.txt"}, deps)
        assert pipeline.decide(record).effect == "ask"
        with pytest.raises(StageError, match="may not run: decided"):
            asyncio.run(pipeline.execute(record, run))
        deps.close()
    assert ran == [] and not record.ended
