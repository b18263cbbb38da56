"""What Co's steering decides for each task's words, without a model (seconds, not an hour).

    uv run python bench/tasks/probe.py                      # every task, every phrasing
    uv run python bench/tasks/probe.py --phrasings original,language --tasks 'files-*'

For each task and phrasing: the route a steered model's first request takes
(co_core.steering.route: ``call`` a tool, ``among`` close tools, ``ask`` first,
``setup`` hint, or ``free``), the effects the words ask for, and whether that matches the
task's ideal first call. A forced call of a tool with an effect the task did not ask for
is counted as **unasked** (it must stay 0).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import SUITES, prepare, select, unasked_effects  # noqa: E402
from tasks import PHRASING_FAMILIES  # noqa: E402


def toolbox_for(env: dict[str, str], cwd: Path):  # type: ignore[no-untyped-def]
    """The toolbox a session in that scratch world would have, with every tool seen."""
    from co_core.agent.assembly.build import load_tools
    from co_core.agent.tools.toolbox import Toolbox
    from co_core.kernel.app import load_app

    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        app = load_app(cwd, warn=lambda message: None)
        settings = app.settings
        specs = {spec.name: spec for spec in app.host.tools()}
        box = Toolbox(app.host, settings, specs)
        box.refresh()
        for tool in load_tools(app.host, lambda message: None):
            box._all[tool.name] = tool.tool_def
        return box
    finally:
        os.environ.clear()
        os.environ.update(saved)


def expected(task, kind: str) -> str:  # type: ignore[no-untyped-def]
    calls = task.oracle.get("calls") or []
    if task.family == "chat":
        return "free"
    if task.family == "setup":
        return "setup"
    if task.family in ("askback", "decline"):
        return "ask" if task.family == "askback" else "decline"
    return calls[0][0] if calls else "free"


def main(argv: list[str] | None = None) -> int:
    from co_core.steering.intent import read_intent
    from co_core.steering.route import route

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks")
    parser.add_argument("--suite", choices=list(SUITES), default="bundled")
    parser.add_argument("--phrasings", default=",".join(PHRASING_FAMILIES))
    args = parser.parse_args(argv)
    wordings = [p for p in args.phrasings.split(",") if p]
    totals: dict[str, list[int]] = {p: [0, 0, 0] for p in wordings}  # right, all, unasked
    for task in select(args.tasks, args.suite):
        with tempfile.TemporaryDirectory(prefix="co-probe-") as tmp:
            scratch = prepare(Path(tmp), task, 0)
            if not task.plugins:  # only the bundled plugins, as the runner's co ask has
                scratch.env["CO_DISABLED_PLUGINS"] = "bookmarks,recipes,chores"
            box = toolbox_for(scratch.env, scratch.ctx.workspace)
            for phrasing in wordings:
                text = task.prompts()[phrasing].format(**scratch.ctx.facts)
                intent = read_intent(text)
                chosen = route(intent, box)
                want = expected(task, chosen.kind)
                got = chosen.tools[0] if chosen.kind == "call" else chosen.kind
                if chosen.kind == "among":
                    got = "among:" + "|".join(chosen.tools)
                same = {want} | ({"run_python"} if want == "run_shell_command" else set())
                right = got in same or (bool(same & set(chosen.tools)) and chosen.kind == "among")
                forced = [{"tool": t, "status": "ok"} for t in chosen.tools]
                unasked = unasked_effects(task, forced) if chosen.kind in ("call", "among") else []
                row = totals[phrasing]
                row[0] += right
                row[1] += 1
                row[2] += len(unasked)
                mark = "ok  " if right else "MISS"
                effects = ",".join(sorted(intent.effects)) or "-"
                print(
                    f"{mark} {task.name:<18} {phrasing:<10} {got:<34} want {want:<22} "
                    f"effects {effects:<10} {chosen.why}"
                    + (f" UNASKED {unasked}" if unasked else "")
                    + f"  | {text[:70]}"
                )
    print()
    for phrasing, (right, total, unasked) in totals.items():
        print(
            f"{phrasing:<10} {right}/{total} first steps as the ideal model's   unasked {unasked}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
