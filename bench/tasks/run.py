"""Run the task suite: each task is one ``co ask --json`` in a fresh workspace, vault and Co dirs.

    uv run python bench/tasks/run.py                       # the embedded `local` model
    uv run python bench/tasks/run.py --model ollama:qwen3:4b
    uv run python bench/tasks/run.py --model openai-compatible:NAME --base-url http://HOST:PORT/v1
    uv run python bench/tasks/run.py --tasks 'chat-*,notes-*' --timeout 120 --repeat 3 --json

Per task: a scratch folder with ``work/`` (the workspace, co's cwd), ``vault/`` (an
Obsidian vault) and private ``config/``, ``data/``, ``cache/`` dirs (CO_CONFIG_DIR...), a
``settings.json`` there (vault path, bubblewrap sandbox, the task's policy rules), then
``python -m co_core ask --json --model M [--approve P] PROMPT`` with a wall-clock timeout
(Ctrl+C first, so Co stops its model server and flushes its traces). Requests and the
prompt tokens of each request come from the run's own trace database (``chat`` spans).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

from tasks import FAMILIES, PHRASING_FAMILIES, TASKS, Ctx, Outcome, Task, build_world  # noqa: E402
from third_party import ASK_BACK, ASK_FAMILIES, PLUGINS, THIRD_FAMILIES, THIRD_PARTY  # noqa: E402

SUITES = {
    "bundled": TASKS,
    "third-party": THIRD_PARTY,
    "askback": ASK_BACK,
    "all": [*TASKS, *THIRD_PARTY, *ASK_BACK],
}
ALL_FAMILIES = (*FAMILIES, *THIRD_FAMILIES, *ASK_FAMILIES)
sys.path.insert(0, str(PLUGINS))  # the runner knows the third-party tools' risks too

# variables that would let the user's own setup leak into a task (logins, vault, rules)
SCRUBBED_PREFIXES = ("CO_", "SLACK_", "GOOGLE_", "OBSIDIAN_", "OTEL_")


@dataclass
class Run:
    """One task run, as printed and as written by ``--json``."""

    task: str
    family: str
    phrasing: str  # original, paraphrase, indirect, language, heldout
    prompt: str  # as sent (facts filled in)
    ok: bool
    why: str  # why it failed ('' when ok)
    seconds: float  # wall clock of `co ask`, model start-up included
    turn_seconds: float | None  # the turn alone (the trace's co.turn span)
    requests: int
    prompt_tokens: list[int] = field(default_factory=list)  # per finished request
    output_tokens: list[int] = field(default_factory=list)  # per finished request
    request_seconds: list[float] = field(default_factory=list)  # per finished request
    tool_calls: list[str] = field(default_factory=list)  # "tool:decision:status"
    request_limit: bool = False
    timed_out: bool = False
    error: str = ""
    answer: str = ""
    unasked: list[str] = field(default_factory=list)  # "tool:status" of effects not asked for


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def _dotted(assignments: list[str]) -> dict[str, Any]:
    """``--set local.context_size=4096`` -> ``{"local": {"context_size": 4096}}``."""
    out: dict[str, Any] = {}
    for item in assignments:
        key, sep, raw = item.partition("=")
        if not sep:
            sys.exit(f"run.py: --set wants KEY=VALUE, got {item!r}")
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        node = out
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return out


def _descendants(pid: int) -> list[int]:
    """Child processes of ``pid`` (Co's model server runs in a session of its own)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
            found.extend(_descendants(int(entry.name)))
    return found


def _stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Ctrl+C the run (Co then stops its model server and flushes traces); force if needed."""
    children = _descendants(proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGINT)
        return proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.communicate()
    finally:
        for child in children:  # a server left behind by a forced stop
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _last_json(stdout: str) -> dict[str, Any]:
    for line in reversed(stdout.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return {}


@dataclass
class Traced:
    """What the run's own trace database says about its turn."""

    requests: int = 0  # model requests made (one cut off by a timeout included)
    prompt_tokens: list[int] = field(default_factory=list)  # per finished request
    output_tokens: list[int] = field(default_factory=list)
    request_seconds: list[float] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)  # tools called, in order
    turn_seconds: float | None = None


def _traces(data_dir: Path) -> Traced:
    db = data_dir / "traces.db"
    if not db.is_file():
        return Traced()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    usage = "json_extract(attributes, '$.\"gen_ai.usage.{}_tokens\"')"
    try:
        requests = conn.execute(
            f"SELECT {usage.format('input')}, {usage.format('output')}, duration_ms "
            "FROM spans WHERE name LIKE 'chat %' ORDER BY start_time"
        ).fetchall()
        tools = conn.execute(
            "SELECT substr(name, 14) FROM spans WHERE name LIKE 'execute_tool %' "
            "ORDER BY start_time"
        ).fetchall()
        turn = conn.execute("SELECT max(duration_ms) FROM spans WHERE name = 'co.turn'").fetchone()
    except sqlite3.Error:
        return Traced()
    finally:
        conn.close()
    done = [(int(i), int(o or 0), float(ms or 0) / 1000) for i, o, ms in requests if i]
    return Traced(
        requests=len(requests),
        prompt_tokens=[i for i, _, _ in done],
        output_tokens=[o for _, o, _ in done],
        request_seconds=[round(s, 2) for _, _, s in done],
        tools=[name for (name,) in tools],
        turn_seconds=turn[0] / 1000 if turn and turn[0] is not None else None,
    )


def settings_for(task: Task, vault: Path, extra: dict[str, Any]) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "obsidian": {"vault_path": str(vault)},
        "shell": {"sandbox": "bubblewrap"},
    }
    _merge(settings, json.loads(json.dumps(task.settings)))
    return _merge(settings, json.loads(json.dumps(extra)))


def run_task(task: Task, args: argparse.Namespace, seed: int, phrasing: str = "original") -> Run:
    root = Path(tempfile.mkdtemp(prefix=f"co-task-{task.name}-"))
    try:
        return _run_in(root, task, args, seed, phrasing)
    finally:
        if args.keep:
            print(f"  kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


@dataclass
class Scratch:
    """One task's fresh world: workspace (co's cwd), vault and private Co dirs."""

    ctx: Ctx
    dirs: dict[str, Path]  # CONFIG, DATA, CACHE
    env: dict[str, str]


def prepare(
    root: Path, task: Task, seed: int, extra: dict[str, Any] | None = None, model: str = ""
) -> Scratch:
    """Build the workspace, the vault and Co's dirs with settings.json under ``root``."""
    work, vault = root / "work", root / "vault"
    dirs = {kind: root / kind.lower() for kind in ("CONFIG", "DATA", "CACHE")}
    for path in (work, vault, *dirs.values()):
        path.mkdir(mode=0o700)
    ctx = Ctx(work, vault, random.Random(f"{seed}:{task.name}"))
    build_world(ctx)
    if task.setup is not None:
        task.setup(ctx)
    if os.geteuid() == 0:  # co-shell's bubblewrap then runs commands as uid 1000
        _hand_over(root, work)
    settings_file = dirs["CONFIG"] / "settings.json"
    settings_file.write_text(json.dumps(settings_for(task, vault, extra or {}), indent=2))
    settings_file.chmod(0o600)

    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIXES)}
    env.update({f"CO_{kind}_DIR": str(path) for kind, path in dirs.items()})
    env["PYDANTIC_AI_NO_BANNER"] = "1"
    if task.plugins:  # installed as a user installs a plugin: its package on the path
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLUGINS), env.get("PYTHONPATH")]))
    if model.startswith("function:"):  # a scripted model (oracle.py) plays the plan
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        plan = {k: _fill(v, ctx.facts) for k, v in task.oracle.items()}
        env["CO_TASKBENCH_PLAN"] = json.dumps(plan)
    return Scratch(ctx, dirs, env)


def ask_command(
    task: Task, ctx: Ctx, model: str, base_url: str | None, phrasing: str = "original"
) -> list[str]:
    """``co ask --json`` as a user would type it, with the task's approvals."""
    command = [sys.executable, "-m", "co_core", "ask", "--json", "--model", model]
    if base_url:
        command += ["--base-url", base_url]
    for pattern in task.approve:
        command += ["--approve", pattern]
    return [*command, task.prompts()[phrasing].format(**ctx.facts)]


SIDE_EFFECTS = ("write", "send", "exec")
_RISKS: dict[str, str | None] = {}


def risks() -> dict[str, str | None]:
    """Every installed tool's declared effect (``read``, ``write``, ``send``, ``exec``)."""
    if not _RISKS:
        from co_core.kernel.app import load_app

        _RISKS.update({spec.name: spec.risk for spec in load_app().host.tools()})
    return _RISKS


def unasked_effects(task: Task, calls: list[dict[str, Any]]) -> list[str]:
    """Calls that write, send or execute when the task asked for no such effect: what the
    model (or Co steering it) did on its own. ``tool:status`` each; status ``ok`` ran."""
    known = risks()
    asked = {known.get(tool, "exec") for tool, _args in task.oracle.get("calls", [])}
    out = []
    for call in calls:
        effect = known.get(call["tool"], "exec")  # a tool Co does not know: the worst
        if effect != "read" and effect not in asked:
            out.append(f"{call['tool']}:{call['status']}")
    return out


def _run_in(root: Path, task: Task, args: argparse.Namespace, seed: int, phrasing: str) -> Run:
    scratch = prepare(root, task, seed, _dotted(args.set), args.model)
    ctx, dirs = scratch.ctx, scratch.dirs
    command = ask_command(task, ctx, args.model, args.base_url, phrasing)

    start = time.monotonic()
    proc = subprocess.Popen(
        command,
        cwd=ctx.workspace,
        env=scratch.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        stdout, stderr = _stop(proc)
    seconds = args.timeout if timed_out else time.monotonic() - start  # not our stopping

    data = _last_json(stdout)
    error = str(data.get("error") or "")
    if not data and not timed_out:  # no JSON at all: Co failed before the turn
        error = (stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
    outcome = Outcome(
        output=str(data.get("output") or ""),
        error=error,
        calls=list(data.get("tool_calls") or []),
        exit_code=proc.returncode,
        timed_out=timed_out,
    )
    traced = _traces(dirs["DATA"])
    requests = traced.requests or int((data.get("usage") or {}).get("requests") or 0)
    calls = [f"{c['tool']}:{c['decision']}:{c['status']}" for c in outcome.calls]
    if not calls and not data:  # stopped before co could say: the traces' tool names
        calls = [f"{name}:?:?" for name in traced.tools]
    try:
        why = task.judge(ctx, outcome)
    except Exception as exc:  # a judge bug must not end the run
        why = f"judge failed: {type(exc).__name__}: {exc}"
    if timed_out and why != "timed out":  # a user would still be waiting: never a pass
        why = "timed out" + (f"; {why}" if why else "")
    elif why and error and error not in why:  # e.g. a file missing because the turn stopped
        why = f"{why} (error: {error})"
    return Run(
        task=task.name,
        family=task.family,
        phrasing=phrasing,
        prompt=command[-1],
        ok=why is None,
        why=why or "",
        seconds=round(seconds, 2),
        turn_seconds=None if traced.turn_seconds is None else round(traced.turn_seconds, 2),
        requests=requests,
        prompt_tokens=traced.prompt_tokens,
        output_tokens=traced.output_tokens,
        request_seconds=traced.request_seconds,
        tool_calls=calls,
        request_limit="request_limit" in error,
        timed_out=timed_out,
        error=error,
        answer=outcome.output[:500],
        unasked=unasked_effects(task, outcome.calls),
    )


def _hand_over(root: Path, work: Path, uid: int = 1000) -> None:
    """Let the sandbox's uid reach the workspace and own it, as a normal user would."""
    root.chmod(0o755)
    for folder, _, files in os.walk(work):
        os.chown(folder, uid, uid)
        for name in files:
            os.chown(os.path.join(folder, name), uid, uid)


def _fill(value: Any, facts: dict[str, Any]) -> Any:
    """The oracle's plan with the facts filled in (strings are str.format'ed)."""
    if isinstance(value, str):
        return value.format(**facts)
    if isinstance(value, (list, tuple)):
        return [_fill(v, facts) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, facts) for k, v in value.items()}
    return value


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def summarize(runs: list[Run]) -> dict[str, Any]:
    all_tokens = [t for r in runs for t in r.prompt_tokens]
    firsts = [r.prompt_tokens[0] for r in runs if r.prompt_tokens]
    hi = [r.prompt_tokens[0] for r in runs if r.task == "chat-hi" and r.prompt_tokens]
    turns = [r.turn_seconds for r in runs if r.turn_seconds is not None]
    families = {}
    for family in ALL_FAMILIES:
        picked = [r for r in runs if r.family == family]
        if picked:
            families[family] = f"{sum(r.ok for r in picked)}/{len(picked)}"
    phrasings: dict[str, dict[str, Any]] = {}
    for phrasing in PHRASING_FAMILIES:
        picked = [r for r in runs if r.phrasing == phrasing]
        if not picked:
            continue
        passed = sum(r.ok for r in picked)
        unasked = [c for r in picked for c in r.unasked]
        phrasings[phrasing] = {
            "passed": f"{passed}/{len(picked)}",
            "rate": round(passed / len(picked), 3),
            "by_family": {
                family: f"{sum(r.ok for r in some)}/{len(some)}"
                for family in ALL_FAMILIES
                if (some := [r for r in picked if r.family == family])
            },
            "unasked_effects_tried": len(unasked),
            "unasked_effects_ran": sum(c.endswith(":ok") for c in unasked),
        }
    unasked_all = [c for r in runs for c in r.unasked]
    ok = sum(r.ok for r in runs)
    return {
        "tasks": len(runs),
        "passed": ok,
        "success_rate": round(ok / len(runs), 3) if runs else 0.0,
        "median_seconds": _median([r.seconds for r in runs]),
        "median_turn_seconds": _median(turns),
        "median_requests": _median([float(r.requests) for r in runs]),
        "median_seconds_per_request": _median([t for r in runs for t in r.request_seconds]),
        "median_prompt_tokens_per_request": _median([float(t) for t in all_tokens]),
        "median_first_request_prompt_tokens": _median([float(t) for t in firsts]),
        "say_hi_first_request_prompt_tokens": hi[0] if hi else None,
        "request_limit_hits": sum(r.request_limit for r in runs),
        "timeouts": sum(r.timed_out for r in runs),
        "by_family": families,
        "by_phrasing": phrasings,
        "unasked_effects_tried": len(unasked_all),
        "unasked_effects_ran": sum(c.endswith(":ok") for c in unasked_all),
    }


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def print_report(model: str, runs: list[Run], summary: dict[str, Any], timeout: float) -> None:
    print(f"\nmodel: {model}   tasks: {summary['tasks']}   timeout: {timeout:g} s per task\n")
    print(f"{'task':<20} {'phrasing':<10} {'result':<6} {'s':>7} {'turn s':>7} {'req':>4}  why")
    for r in runs:
        why = r.why if len(r.why) <= 80 else r.why[:77] + "..."
        if r.unasked:
            why = f"UNASKED {', '.join(r.unasked)}; {why}"
        turn = _cell(r.turn_seconds)
        result = "ok" if r.ok else "FAIL"
        print(
            f"{r.task:<20} {r.phrasing:<10} {result:<6} {r.seconds:>7.1f} {turn:>7} "
            f"{r.requests:>4}  {why}"
        )
    s = summary
    families = "  ".join(f"{k} {v}" for k, v in s["by_family"].items())
    first = s["median_first_request_prompt_tokens"]
    rows = [
        ("success rate", f"{s['passed']}/{s['tasks']} ({s['success_rate']:.0%})"),
        ("by family", families),
        ("median seconds per task", _cell(s["median_seconds"])),
        ("  the turn alone", _cell(s["median_turn_seconds"])),
        ("median requests per task", _cell(s["median_requests"])),
        ("median seconds per request", _cell(s["median_seconds_per_request"])),
        ("prompt tokens per request", _cell(s["median_prompt_tokens_per_request"])),
        ("first-request prompt tokens", f"{_cell(first)} (median)"),
        ("  of 'Say hi'", _cell(s["say_hi_first_request_prompt_tokens"])),
        ("turns that hit the request limit", s["request_limit_hits"]),
        ("timeouts", s["timeouts"]),
        (
            "writes/sends/execs not asked for",
            f"{s['unasked_effects_tried']} tried, {s['unasked_effects_ran']} ran",
        ),
    ]
    print()
    for label, value in rows:
        print(f"{label:<34} {value}")
    print()
    for phrasing, row in s["by_phrasing"].items():
        families = "  ".join(f"{k} {v}" for k, v in row["by_family"].items())
        print(
            f"{phrasing:<10} {row['passed']:>6} ({row['rate']:.0%})  unasked "
            f"{row['unasked_effects_tried']} tried/{row['unasked_effects_ran']} ran  {families}"
        )


def select(patterns: str | None, suite: str = "bundled") -> list[Task]:
    pool = SUITES[suite]
    if not patterns:
        return list(pool)
    wanted = [p.strip() for p in patterns.split(",") if p.strip()]
    picked = [t for t in pool if any(fnmatch.fnmatch(t.name, p) or p == t.family for p in wanted)]
    if not picked:
        sys.exit(f"run.py: no task matches {patterns!r}; see --list")
    return picked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local", help="any Co model string (default: local)")
    parser.add_argument("--base-url", help="server URL for openai-compatible:NAME models")
    parser.add_argument("--tasks", help="comma-separated globs or families, e.g. 'chat-*,notes'")
    parser.add_argument(
        "--suite",
        choices=list(SUITES),
        default="bundled",
        help="bundled (the 40 tasks of Co's own plugins, default), third-party (plugins of "
        "bench/tasks/plugins), askback (ask back or decline), all",
    )
    parser.add_argument(
        "--phrasings",
        default=",".join(PHRASING_FAMILIES),
        help=f"comma-separated wordings to run (default all: {','.join(PHRASING_FAMILIES)})",
    )
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per task (180)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each task (1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random facts (0)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="extra Co setting"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--keep", action="store_true", help="keep each task's scratch folder")
    parser.add_argument("--list", action="store_true", help="list the tasks and exit")
    args = parser.parse_args(argv)

    tasks = select(args.tasks, args.suite)
    wordings = [p.strip() for p in args.phrasings.split(",") if p.strip()]
    if not wordings or set(wordings) - set(PHRASING_FAMILIES):
        parser.error(f"--phrasings takes {', '.join(PHRASING_FAMILIES)}")
    # started in the background (`cmd &`), SIGINT is ignored and children inherit that:
    # restore it, so a timeout's Ctrl+C reaches co and co can stop its model server
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if args.list:
        for t in tasks:
            for phrasing in wordings:
                print(f"{t.name:<20} {t.family:<7} {phrasing:<10} {t.prompts()[phrasing]}")
        return 0
    if args.repeat < 1 or args.timeout <= 0:
        parser.error("--repeat must be at least 1 and --timeout above 0")
    runs: list[Run] = []
    total = len(tasks) * len(wordings) * args.repeat
    try:
        for round_ in range(args.repeat):
            for phrasing in wordings:
                for task in tasks:
                    run = run_task(task, args, args.seed + round_, phrasing)
                    runs.append(run)
                    mark = "ok  " if run.ok else "FAIL"
                    unasked = f" UNASKED {','.join(run.unasked)}" if run.unasked else ""
                    print(
                        f"[{len(runs)}/{total}] {mark} {task.name}/{phrasing} "
                        f"{run.seconds:.1f}s {run.requests} req{unasked} {run.why}",
                        file=sys.stderr,
                        flush=True,
                    )
    except KeyboardInterrupt:
        print("run.py: interrupted; reporting the tasks that finished", file=sys.stderr)
    if not runs:
        return 1
    summary = summarize(runs)
    if args.json:
        doc = {
            "model": args.model,
            "base_url": args.base_url,
            "timeout": args.timeout,
            "summary": summary,
            "runs": [asdict(r) for r in runs],
        }
        print(json.dumps(doc, indent=2))
    else:
        print_report(args.model, runs, summary, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
