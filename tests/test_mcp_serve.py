"""``co mcp serve`` driven by the ``mcp`` SDK's own client over stdio, as another assistant would.

A fake plugin is installed through the real entry-point machinery; its tools run with a
real CoDeps, and Co's policy decides every call headlessly.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from co_core.testing import install_fake_plugin

HOOKS = """
from co_core import hookimpl

@hookimpl
def register_tools(register):
    register("co_fake_files_tools:greet", risk="read", permission="files:read:{name}")
    register("co_fake_files_tools:remove_file", risk="write", permission="files:delete:{path}")
"""

TOOLS = '''
from pydantic_ai import ModelRetry, RunContext

from co_core.kernel.deps import CoDeps


def greet(ctx: RunContext[CoDeps], name: str) -> str:
    """Say hello from the workspace."""
    return f"hello {name} from {ctx.deps.workspace.name}"


def remove_file(ctx: RunContext[CoDeps], path: str) -> str:
    """Delete a file in the workspace."""
    target = ctx.deps.workspace / path
    if not target.exists():
        raise ModelRetry(f"{path} does not exist; list the folder first")
    target.unlink()
    return f"removed {path}"
'''


def _serve(site: Path, co_dirs: Path, workspace: Path, *extra: str) -> StdioServerParameters:
    env = {
        "PYTHONPATH": str(site),
        "CO_LOAD_PLUGINS": "files",
        **{
            f"CO_{k.upper()}_DIR": str(co_dirs.parent / f"co-{k}")
            for k in ("config", "data", "cache")
        },
    }
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "co_core", "mcp", "serve", *extra],
        env=env,
        cwd=str(workspace),
    )


def _session(params: StdioServerParameters, calls: list[tuple[str, dict[str, Any]]]) -> Any:
    async def main() -> tuple[list[Any], list[Any]]:
        async with Client(params) as client:
            listed = (await client.list_tools()).tools
            results = [await client.call_tool(name, args) for name, args in calls]
            return listed, results

    return anyio.run(main)


def _text(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


def test_serve_lists_tools_runs_allowed_calls_and_refuses_the_rest(
    co_dirs: Path, site: Path, tmp_path: Path
) -> None:
    install_fake_plugin(site, "files", HOOKS)
    (site / "co_fake_files_tools.py").write_text(textwrap.dedent(TOOLS))
    workspace = tmp_path / "proj"
    (workspace / "scratch").mkdir(parents=True)
    (workspace / "keep").mkdir()
    for name in ("scratch/a.txt", "keep/b.txt", "other.txt"):
        (workspace / name).write_text("x")
    (co_dirs / "settings.json").write_text(
        json.dumps(
            {
                "policy": {
                    "rules": [
                        {
                            "match": "files:delete:keep/**",
                            "effect": "deny",
                            "reason": "keep is kept",
                        }
                    ]
                }
            }
        )
    )
    params = _serve(site, co_dirs, workspace, "--approve", "files:delete:scratch/*")
    listed, results = _session(
        params,
        [
            ("greet", {"name": "Ann"}),
            ("remove_file", {"path": "scratch/a.txt"}),
            ("remove_file", {"path": "keep/b.txt"}),
            ("remove_file", {"path": "other.txt"}),
            ("remove_file", {"path": "scratch/missing.txt"}),
            ("greet", {}),
        ],
    )
    tools = {tool.name: tool for tool in listed}
    assert set(tools) == {"greet", "remove_file"}
    assert tools["greet"].annotations.read_only_hint is True
    assert tools["remove_file"].input_schema["required"] == ["path"]
    greet, allowed, denied, asked, missing, bad = results

    assert not greet.is_error and _text(greet) == "hello Ann from proj"
    assert not allowed.is_error and not (workspace / "scratch/a.txt").exists()

    assert denied.is_error and "keep is kept" in _text(denied)
    assert (workspace / "keep/b.txt").exists()

    assert asked.is_error and (workspace / "other.txt").exists()
    assert "needs approval" in _text(asked) and "--approve files:delete:other.txt" in _text(asked)

    assert missing.is_error and "does not exist" in _text(missing)
    assert bad.is_error and "name" in _text(bad)

    audit = [
        json.loads(line)
        for path in (co_dirs.parent / "co-data" / "audit").glob("mcp-*.jsonl")
        for line in path.read_text().splitlines()
    ]
    decisions = [
        (e["permission"], e["effect"], e["source"]) for e in audit if e["event"] == "decision"
    ]
    assert ("files:delete:scratch/a.txt", "allow", "flag") in decisions
    assert ("files:delete:keep/b.txt", "deny", "user") in decisions
    assert ("files:delete:other.txt", "deny", "headless") in decisions
    runs = [(e["tool"], e["status"]) for e in audit if e["event"] == "execution"]
    assert runs.count(("remove_file", "ok")) == 1 and ("remove_file", "retry") in runs
