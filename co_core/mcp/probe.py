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
    """Connect, list tools, disconnect; any failure becomes one line in ``detail``."""
    import anyio

    from co_core.mcp.toolsets import build_client, one_line

    if declared.skipped:
        return Probe(declared.name, False, f"not started: {declared.skipped}")
    try:
        client: Any = build_client(declared, workspace=workspace, timeout=timeout)
        with anyio.fail_after(timeout + 5):
            async with client:
                tools = await client.list_tools()
    except TimeoutError:
        return Probe(declared.name, False, f"no answer in {timeout:g} s")
    except Exception as exc:
        return Probe(declared.name, False, one_line(exc))
    names = [t.name for t in tools]
    hinted = [t.name for t in tools if t.annotations and t.annotations.read_only_hint]
    return Probe(declared.name, True, f"{len(names)} tools", names, hinted)


def probe_all(declared: list[Declared], *, workspace: Path, timeout: float) -> list[Probe]:
    """Probe every server at once (each in its own task, so one slow server costs no more)."""
    import anyio

    results: dict[str, Probe] = {}

    async def one(item: Declared) -> None:
        results[item.name] = await probe(item, workspace=workspace, timeout=timeout)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for item in declared:
                group.start_soon(one, item)

    anyio.run(main)
    return [results[item.name] for item in declared]
