"""Benchmark co-obsidian's search against ripgrep, and the index's life, in one run.

    uv run python bench/make_vault.py /tmp/obs-vault          # 10,000 notes, ~53 MB
    env -u PYTHONDONTWRITEBYTECODE uv run python bench/obsidian_search.py /tmp/obs-vault

Sections (``--only`` picks some):

- ``search``: per query, an ``rg`` scan of the vault (``rg -l -i -w -F`` on the query's
  first word, the least rg has to do for that query), Co's first search with no index
  (answered by rg while the index builds behind it), the time until the index is ready,
  warm searches, and the first search after 10 notes were edited.
- ``after``: back-to-back searches right after the background build finished.
- ``pages``: pages 1, 10, 50 and 100 of a word in most notes, paged through in order as a
  model does, and page 100 asked for at once by a Co that has just started, each against
  page 1 (the user's rules keep one folder out, as a real session's policy does).
- ``tags``: ``list_notes(tag=…)`` on a generated 50,000-note vault: the first page, the
  same again, the second, the tenth and the last.
- ``parse``: what reading notes costs per MB of Markdown: Co's parser (markdown-it-py
  with Co's Obsidian plugins) against the regular expressions before it (``--before``, a
  git revision), markdown-it-py and mistune alone (mistune only where it is installed).
- ``sizes``: the first search on generated 1 MB (190 notes), 2 MB and 20 MB vaults, against rg.
- ``ask``: five ``co ask`` processes in a row on a generated 40 MB vault, each asking a
  scripted model that searches once (``--think`` seconds per reply, as a model would
  take), and how much of the index each leaves behind; then whether a search after the
  fifth is answered by the index.

Co runs through the real ``search_notes`` tool with Co's real deps; the index lives in
a temporary cache dir. Where ``PYTHONDONTWRITEBYTECODE`` is set, run this with
``env -u PYTHONDONTWRITEBYTECODE`` (users' Python keeps its bytecode cache). CPU time is
printed too: the machine may be shared, CPU time is steadier.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

QUERIES = [
    "zanzibar",
    "quokka project",
    '"weekly review"',
    "xylophone meeting budget",
    "東京",
    "café",
    "🍕",
    "привет мир",
]
HERE = Path(__file__).resolve().parent
BEFORE = "be3b27a"  # the regular-expression parser Co used before markdown-it-py


def first_word(query: str) -> str:
    return query.replace('"', "").split()[0]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rg_seconds(vault: Path, query: str, runs: int) -> tuple[float, float]:
    """Median wall time and CPU time (user + system, all threads) of an rg scan."""
    cmd = ["rg", "-l", "-i", "-w", "-F", "-g", "*.md", first_word(query), str(vault)]
    walls, cpus = [], []
    for _ in range(runs):
        start, cpu = time.perf_counter(), _children_cpu()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)
        walls.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def ask_model() -> Any:
    """The scripted model of the ``ask`` section: searches once, then answers; each reply
    takes ``CO_BENCH_THINK`` seconds (``co ask -m function:obsidian_search:ask_model``)."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart

    from co_core.testing import scripted_model

    think = float(os.environ.get("CO_BENCH_THINK", "1.0"))

    async def script(messages: list[Any], info: Any) -> ModelResponse:
        await asyncio.sleep(think)
        if any(isinstance(part, ToolReturnPart) for part in messages[-1].parts):
            return ModelResponse(parts=[TextPart("Found it.")])
        return ModelResponse(parts=[ToolCallPart("search_notes", {"query": "zanzibar"})])

    return scripted_model(script)


class Bench:
    def __init__(self, vault: Path, runs: int, think: float, before: str = BEFORE) -> None:
        self.vault = vault
        self.runs = runs
        self.think = think
        self.before = before
        self.tmp = Path(tempfile.mkdtemp(prefix="co-bench-"))
        for kind in ("config", "data", "cache"):
            (self.tmp / kind).mkdir()
            os.environ[f"CO_{kind.upper()}_DIR"] = str(self.tmp / kind)
        os.environ["OBSIDIAN_VAULT_PATH"] = str(vault)

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fresh_cache(self) -> None:
        shutil.rmtree(self.tmp / "cache")
        (self.tmp / "cache").mkdir()

    def ctx(self, vault: Path | None = None) -> Any:
        from pydantic_ai import RunContext
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.usage import RunUsage

        from co_core.kernel.app import load_app
        from co_core.policy.engine import PolicyEngine

        os.environ["OBSIDIAN_VAULT_PATH"] = str(vault or self.vault)
        app = load_app(self.tmp)
        deps = app.make_deps(self.tmp)
        # a session's real policy, keeping one folder from being read: searches and
        # listings ask it about every note they would show
        engine = PolicyEngine.from_app(app, workspace=self.tmp, audit=False)
        engine.grant_session("obsidian:read:archive/**", effect="deny")
        deps.policy = engine.allows
        if hasattr(deps, "policy_version"):
            deps.policy_version = lambda: engine.version
        # as Co's session does once the agent is ready: what start-up built is left out
        # of later collections, so no full collection lands in a timed search
        gc.collect()
        gc.freeze()
        return RunContext(deps=deps, model=TestModel(), usage=RunUsage())

    @staticmethod
    def timed(ctx: Any, query: str, page: int = 1) -> tuple[float, int, float]:
        """Wall time, hits, and CPU time of this thread (not the background build's)
        plus its child processes (rg)."""
        from co_obsidian.tools import search_notes

        start, cpu, children = time.perf_counter(), time.thread_time(), _children_cpu()
        result = search_notes(ctx, query, page=page)
        cpu = time.thread_time() - cpu + _children_cpu() - children
        return time.perf_counter() - start, result.count or 0, cpu

    @staticmethod
    def wait_built(ctx: Any) -> None:
        """Until the background build (or the check of a restarted Co) is done."""
        builder = ctx.deps.resource("obsidian.index").index()._builder
        if builder is not None:
            builder.join()

    # -- sections ---------------------------------------------------------------------

    def search(self) -> None:
        rows = []
        for query in QUERIES:
            self.fresh_cache()
            rg, rg_cpu = rg_seconds(self.vault, query, self.runs)
            ctx = self.ctx()
            started = time.perf_counter()
            first, hits, first_cpu = self.timed(ctx, query)
            self.wait_built(ctx)
            ready = time.perf_counter() - started
            warms = []
            for _ in range(self.runs):
                # a repeated query would be answered from the hits kept for its next
                # pages: each warm search starts afresh, as a new query would
                ctx.deps.resource("obsidian.index").index()._pages.clear()
                warms.append(self.timed(ctx, query))
            ctx.deps.close()
            warm = statistics.median(w[0] for w in warms)
            warm_cpu = statistics.median(w[2] for w in warms)
            rows.append((query, hits, rg, first, warm, ready, rg_cpu, first_cpu, warm_cpu))
        print(
            f"\n{'query':28} {'hits':>5} {'rg ms':>8} {'first ms':>9} {'x rg':>6}"
            f" {'index s':>8} {'warm ms':>8} {'rg/warm':>8}"
        )
        for query, hits, rg, first, warm, ready, *_ in rows:
            print(
                f"{query:28} {hits:>5} {rg * 1000:8.1f} {first * 1000:9.0f} {first / rg:6.1f}"
                f" {ready:8.1f} {warm * 1000:8.2f} {rg / warm:8.0f}"
            )
        print("CPU time (user + system):")
        print(f"{'query':28} {'rg ms':>8} {'first ms':>9} {'x rg':>6} {'warm ms':>8}")
        for query, _h, _rg, _f, _w, _r, rg_cpu, first_cpu, warm_cpu in rows:
            print(
                f"{query:28} {rg_cpu * 1000:8.1f} {first_cpu * 1000:9.0f}"
                f" {first_cpu / rg_cpu:6.1f} {warm_cpu * 1000:8.2f}"
            )
        rg_med = statistics.median(r[2] for r in rows)
        first_med = statistics.median(r[3] for r in rows)
        print(
            f"median: rg {rg_med * 1000:.0f} ms, first search {first_med * 1000:.0f} ms"
            f" ({first_med / rg_med:.1f}x), index ready after"
            f" {statistics.median(r[5] for r in rows):.1f} s, slowest warm"
            f" {max(r[4] for r in rows) * 1000:.1f} ms, warm rg/Co worst"
            f" {min(r[2] / r[4] for r in rows):.0f}x"
        )
        self.edits()

    def edits(self) -> None:
        """10 notes get a new line; the next search (after the recheck interval, as when
        the model searches again a few seconds later) notices and reindexes them."""
        ctx = self.ctx()
        self.timed(ctx, "zanzibar")
        self.wait_built(ctx)
        notes = sorted(self.vault.rglob("*.md"))
        touched = notes[:: max(1, len(notes) // 10)][:10]
        originals = {p: p.read_bytes() for p in touched}
        afters = []
        try:
            recheck = ctx.deps.section("obsidian").recheck_seconds
            for word in ("walrus", "narwhal", "dugong"):
                time.sleep(recheck + 0.1)
                for p in touched:
                    with open(p, "a", encoding="utf-8") as handle:
                        handle.write(f"\nnewly added {word} line\n")
                afters.append(self.timed(ctx, word))
        finally:
            for p, data in originals.items():
                p.write_bytes(data)
            ctx.deps.close()
        after = sorted(afters)[1]
        print(
            f"after touching 10 notes: next search {after[0] * 1000:.0f} ms ({after[1]} hits;"
            f" runs {', '.join(f'{a[0] * 1000:.0f}' for a in afters)} ms)"
        )

    def after(self) -> None:
        """The first search starts the build; once it is done, searches in a row."""
        self.fresh_cache()
        ctx = self.ctx()
        self.timed(ctx, "zanzibar")
        self.wait_built(ctx)
        runs = [self.timed(ctx, QUERIES[i % len(QUERIES)]) for i in range(2 * len(QUERIES))]
        ctx.deps.close()
        print(
            f"\nback-to-back right after the build: {len(runs)} searches, median"
            f" {statistics.median(r[0] for r in runs) * 1000:.1f} ms"
            f" (CPU {statistics.median(r[2] for r in runs) * 1000:.1f} ms),"
            f" slowest {max(r[0] for r in runs) * 1000:.1f} ms"
        )

    def pages(self) -> None:
        """Pages of a word in most notes, paged through in order, and page 100 at once by
        a Co that has just started; each against page 1 (CPU time, median of the runs)."""
        self.fresh_cache()
        ctx = self.ctx()
        self.timed(ctx, "zanzibar")
        self.wait_built(ctx)
        index = ctx.deps.resource("obsidian.index").index()
        runs: dict[int, list[tuple[float, float]]] = {p: [] for p in (1, 10, 50, 100)}
        for _ in range(self.runs):
            index._pages.clear()  # the query afresh
            for page in range(1, 101):
                wall, _hits, cpu = self.timed(ctx, "project", page)
                if page in runs:
                    runs[page].append((wall, cpu))
        ctx.deps.close()
        direct = []
        for _ in range(self.runs):
            ctx = self.ctx()  # a Co that has just started: nothing kept
            self.timed(ctx, "zanzibar")
            self.wait_built(ctx)  # the index open, its check for changes done
            ctx.deps.resource("obsidian.index").index()._pages.clear()
            direct.append(self.timed(ctx, "project", 100))
            ctx.deps.close()
        first = statistics.median(c for _w, c in runs[1])
        print("\npages of 'project' (a word in most notes), wall / CPU ms, CPU against page 1:")
        for page, timings in runs.items():
            wall = statistics.median(w for w, _c in timings)
            cpu = statistics.median(c for _w, c in timings)
            print(
                f"  page {page:>3}, in order: {wall * 1000:6.1f} / {cpu * 1000:5.1f}  {cpu / first:4.2f}x"
            )
        wall = statistics.median(w for w, _h, _c in direct)
        cpu = statistics.median(c for _w, _h, c in direct)
        print(f"  page 100, at once:  {wall * 1000:6.1f} / {cpu * 1000:5.1f}  {cpu / first:4.2f}x")

    def tags(self) -> None:
        """``list_notes(tag=…)`` on a generated 50,000-note vault, in a Co that has just
        started (its index complete): the first page, asked again, the second, the tenth
        and the last (CPU ms)."""
        from co_obsidian.tools import list_notes

        vault = self.tmp / "vault-50k"
        make_vault(vault, 50_000, avg_bytes=400)
        self.fresh_cache()
        ctx = self.ctx(vault)
        started = time.perf_counter()
        ctx.deps.resource("obsidian.index").index().refresh()
        built = time.perf_counter() - started
        ctx.deps.close()
        ctx = self.ctx(vault)  # a Co that has just started: answers while it checks
        wall, hits, _cpu = self.timed(ctx, "zanzibar")
        index = ctx.deps.resource("obsidian.index").index()
        answered = getattr(index, "answered_by", "?")
        started = time.perf_counter()
        self.wait_built(ctx)
        checked = time.perf_counter() - started + wall
        ctx.deps.close()
        print(
            f"\n{vault.name}: index built in {built:.0f} s; the first search of a Co that"
            f" has just started: {wall * 1000:.0f} ms ({hits} hits, answered by {answered};"
            f" its check of every note done after {checked:.1f} s)"
        )
        print("list_notes(tag=...), each tag in a Co that has just started, CPU ms:")
        for tag in ("project", "travel", "project/alpha"):
            ctx = self.ctx(vault)  # a Co that has just started
            timings = {}
            for label, page in (("page 1", 1), ("again", 1), ("page 2", 2), ("page 10", 10)):
                cpu = time.thread_time()
                result = list_notes(ctx, tag=tag, page=page)
                timings[label] = time.thread_time() - cpu
            last = max(1, -(-(result.count or 0) // 50))
            cpu = time.thread_time()
            list_notes(ctx, tag=tag, page=last)
            timings[f"last ({last})"] = time.thread_time() - cpu
            self.wait_built(ctx)
            ctx.deps.close()
            shown = ", ".join(f"{k} {v * 1000:.0f}" for k, v in timings.items())
            print(f"  #{tag} ({result.count:,} notes): {shown}")

    def parse(self) -> None:
        """Parse cost per MB of Markdown (CPU), on the vault's notes (up to 10 MB)."""
        from co_obsidian.parse import parse_note
        from markdown_it import MarkdownIt

        texts: list[str] = []
        size = 0
        for path in sorted(self.vault.rglob("*.md")):
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
            size += len(texts[-1].encode())
            if size > 10_000_000:
                break
        megabytes = size / 1e6
        parsers: dict[str, Any] = {"Co's parser (markdown-it-py + Obsidian plugins)": parse_note}
        before = _parser_at(self.before)
        if before is not None:
            parsers[f"the regular expressions before ({self.before})"] = before
        plain = MarkdownIt("commonmark").enable(["table", "strikethrough"])
        parsers["markdown-it-py alone (CommonMark + tables)"] = lambda text, _stem: plain.parse(
            text
        )
        try:
            import mistune

            ast = mistune.create_markdown(renderer=None, plugins=["table", "strikethrough"])
            parsers["mistune alone (AST + tables)"] = lambda text, _stem: ast(text)
        except ImportError:
            print("(mistune is not installed: `uv pip install mistune` to compare it)")
        costs = {}
        for name, parse in parsers.items():
            best = float("inf")
            for _ in range(self.runs):
                cpu = time.thread_time()
                for text in texts:
                    parse(text, "note")
                best = min(best, time.thread_time() - cpu)
            costs[name] = best / megabytes
        print(
            f"\nparse cost on {len(texts):,} notes, {megabytes:.1f} MB (CPU, best of {self.runs}):"
        )
        base = next((v for k, v in costs.items() if k.startswith("the regular")), None)
        for name, cost in costs.items():
            against = f"  {cost / base:4.1f}x the regular expressions" if base else ""
            print(f"  {name:52} {cost * 1000:6.1f} ms/MB{against}")

    def sizes(self) -> None:
        """First search on generated 1 MB (190 notes), 2 MB and 20 MB vaults."""
        print(
            f"\n{'vault':>8} {'notes':>6} {'rg ms':>7} {'first ms':>9} {'x rg':>5}"
            f" {'rg CPU':>7} {'first CPU':>10} {'x rg':>5} {'index s':>8}"
        )
        for megabytes, notes in ((1, 190), (2, 380), (20, 3800)):
            vault = self.tmp / f"vault-{megabytes}mb"
            make_vault(vault, notes)
            for query in ("zanzibar", "quokka project"):
                self.fresh_cache()
                rg, rg_cpu = rg_seconds(vault, query, self.runs)
                ctx = self.ctx(vault)
                started = time.perf_counter()
                first, _hits, cpu = self.timed(ctx, query)
                self.wait_built(ctx)
                ready = time.perf_counter() - started
                ctx.deps.close()
                print(
                    f"{megabytes:>6}MB {notes:>6} {rg * 1000:7.1f} {first * 1000:9.0f}"
                    f" {first / rg:5.1f} {rg_cpu * 1000:7.1f} {cpu * 1000:10.0f}"
                    f" {cpu / rg_cpu:5.1f} {ready:8.2f}   {query}"
                )

    def ask(self) -> None:
        """Five ``co ask`` processes on a 40 MB vault, then a search."""
        vault = self.tmp / "vault-40mb"
        make_vault(vault, 7600)
        self.fresh_cache()
        env = {
            **os.environ,
            "OBSIDIAN_VAULT_PATH": str(vault),
            "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
            "CO_BENCH_THINK": str(self.think),
        }
        total = sum(1 for _ in vault.rglob("*.md"))
        print(
            f"\nco ask x5 on {vault.name} ({total} notes), model thinking {self.think} s a reply:"
        )
        for run in range(1, 6):
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "co_core", "ask", "-m", "function:obsidian_search:ask_model",
                 "find my zanzibar notes"],
                env=env, capture_output=True, text=True, timeout=600, check=False,
            )  # fmt: skip
            wall = time.perf_counter() - started
            if done.returncode != 0:
                print(f"  run {run}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
                return
            held = indexed(self.tmp / "cache")
            print(f"  run {run}: {wall:.1f} s, the index holds {held} of {total} notes")
        ctx = self.ctx(vault)
        wall = self.timed(ctx, "zanzibar")[0]
        index = ctx.deps.resource("obsidian.index").index()
        answered = "the index" if index.answered_by == "index" else "rg (index not complete)"
        ctx.deps.close()
        print(f"  a search after the 5th: {wall * 1000:.1f} ms, answered by {answered}")


def indexed(cache: Path) -> int:
    found = list((cache / "obsidian").glob("*.sqlite"))
    if not found:
        return 0
    with sqlite3.connect(found[0]) as conn:
        try:
            (count,) = conn.execute("SELECT count(*) FROM notes").fetchone()
        except sqlite3.Error:
            count = 0
    conn.close()
    return count


def make_vault(path: Path, notes: int, avg_bytes: int | None = None) -> None:
    more = ["--avg-bytes", str(avg_bytes)] if avg_bytes else []
    subprocess.run(
        [sys.executable, str(HERE / "make_vault.py"), str(path), "--notes", str(notes), *more],
        check=True,
        stderr=subprocess.DEVNULL,
    )


def _parser_at(revision: str) -> Any:
    """``parse_note`` of co_obsidian/parse.py as it was at ``revision`` (None without
    git or that revision)."""
    import types

    try:
        source = subprocess.run(
            ["git", "show", f"{revision}:plugins/co_obsidian/co_obsidian/parse.py"],
            cwd=HERE,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        print(f"(no parser at git revision {revision!r} to compare with)")
        return None
    module = types.ModuleType("parse_before")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{revision}:parse.py", "exec"), module.__dict__)
    return module.parse_note


SECTIONS = ("search", "after", "pages", "tags", "parse", "sizes", "ask")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", nargs="*", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--think", type=float, default=1.0, help="model seconds a reply (ask)")
    parser.add_argument(
        "--before", default=BEFORE, help="git revision of the parser to compare with (parse)"
    )
    args = parser.parse_args(argv)
    vault = args.vault.resolve()
    if not vault.is_dir():
        print(f"no vault at {vault}: run bench/make_vault.py {vault} first", file=sys.stderr)
        return 2
    if shutil.which("rg") is None:
        print("rg (ripgrep) is not installed", file=sys.stderr)
        return 2
    notes = sum(1 for _ in vault.rglob("*.md"))
    size = sum(p.stat().st_size for p in vault.rglob("*.md"))
    print(f"vault {vault}: {notes} notes, {size / 1e6:.1f} MB; {os.cpu_count()} CPUs")
    subprocess.run(["rg", "-c", "warmup", str(vault)], stdout=subprocess.DEVNULL)  # page cache
    bench = Bench(vault, args.runs, args.think, args.before)
    try:
        for section in SECTIONS:
            if section in args.only:
                getattr(bench, section)()
    finally:
        bench.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
