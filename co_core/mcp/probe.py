"""Start one configured MCP server briefly and ask for its tools (``co mcp list``, ``co status``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from co_core.mcp.settings import Declared


@dataclass
class Probe:
    name: str
    ok: bool
    detail: str = ""
    tools: list[str] = field(default_factory=list)
    read_only: list[str] = field(default_factory=list)  # tools whose server hints read-only


async def probe(declared: Declared, *, workspace: Path, timeout: float) -> Probe:
    """Connect, list tools, disconnect within ``timeout`` seconds; any failure becomes one
    line in ``detail`` (a server that takes too long: "timed out after N s")."""
    import anyio

    from co_core.mcp.settings import Limits
    from co_core.mcp.toolsets import build_client, one_line

    if declared.skipped:
        return Probe(declared.name, False, f"not started: {declared.skipped}")
    timed_out = f"timed out after {timeout:g} s"
    deadline = anyio.CancelScope(deadline=anyio.current_time() + timeout)
    try:
        client: Any = build_client(declared, workspace=workspace, limits=Limits(timeout, timeout))
        with deadline:
            async with client:
                tools = await client.list_tools()
    except Exception as exc:
        return Probe(declared.name, False, timed_out if deadline.cancel_called else one_line(exc))
    if deadline.cancelled_caught:
        return Probe(declared.name, False, timed_out)
    names = [t.name for t in tools]
    hinted = [t.name for t in tools if t.annotations and t.annotations.read_only_hint]
    return Probe(declared.name, True, f"{len(names)} tools", names, hinted)


def probe_all(
    declared: list[Declared], *, workspace: Path, settings: Any, at_most: float | None = None
) -> list[Probe]:
    """Probe every server at once (each in its own task, so one slow server costs no more),
    each within its own start-up ``timeout`` (or ``at_most``, if shorter)."""
    import anyio

    from co_core.mcp.settings import limits

    results: dict[str, Probe] = {}

    async def one(item: Declared) -> None:
        timeout = limits(item.server, settings).startup
        timeout = min(timeout, at_most) if at_most is not None else timeout
        results[item.name] = await probe(item, workspace=workspace, timeout=timeout)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for item in declared:
                group.start_soon(one, item)

    anyio.run(main)
    return [results[item.name] for item in declared]
