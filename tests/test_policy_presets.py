"""The read-only preset: a table of exact forms, turned on by the user, overridden by the
user's own rules, named by ``co policy explain``, printed in docs/policy.md, and compared
with a public peer's list (OpenAI Codex's command-safety tests)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from policy_support import call, engine_for
from test_policy_cli import co

from co_core.policy.presets import READ_ONLY
from co_core.policy.read_only import ROWS, markdown
from co_core.policy.shell.programs import PROGRAMS
from co_core.testing import write_settings

ROOT = Path(__file__).resolve().parents[1]


def _compare_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "compare_codex", ROOT / "bench" / "compare_codex.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_preset_is_turned_on_listed_explained_and_off_again(
    co_dirs: Path, tmp_path: Path
) -> None:
    listed = co("policy", "preset", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"read-only\s+.\s*off\s+.\s*" + str(len(ROWS)), listed.stdout)
    turned = co("policy", "preset", "read-only", cwd=tmp_path)
    assert turned.returncode == 0, turned.stderr
    assert re.search(r"git status\s+shows the working tree", turned.stdout)
    assert json.loads((co_dirs / "settings.json").read_text())["policy"]["presets"] == ["read-only"]
    rules = json.loads(co("policy", "--json", cwd=tmp_path).stdout)["default"]
    assert {"match": "preset read-only: rg", "effect": "allow", "origin": "preset read-only",
            "reason": "the read-only preset's row 'rg' lists this form; it runs read-only"} in rules  # fmt: skip
    explained = co("policy", "explain", "shell:exec:ls -la src", cwd=tmp_path)
    assert "ALLOW" in explained.stdout, explained.stdout
    assert "-> default  'preset read-only: ls' allow" in explained.stdout
    asked = co("policy", "explain", "shell:exec:sed --e='w X' README.md", cwd=tmp_path)
    assert "ASK" in asked.stdout
    assert "--e is not an option the read-only preset lists for sed" in asked.stdout
    as_json = json.loads(co("policy", "explain", "--json", "shell:exec:git log -5", cwd=tmp_path).stdout)  # fmt: skip
    assert (as_json["effect"], as_json["rule"], as_json["read_only"]) == (
        "allow", "preset read-only: git log", True)  # fmt: skip
    assert co("policy", "preset", "read-only", "--off", cwd=tmp_path).returncode == 0
    assert json.loads((co_dirs / "settings.json").read_text())["policy"]["presets"] == []


def test_an_unknown_preset_is_one_clear_line(co_dirs: Path, tmp_path: Path) -> None:
    bad = co("policy", "preset", "readonly", cwd=tmp_path)
    assert bad.returncode == 2 and "no preset named 'readonly' (presets: read-only)" in bad.stderr
    settings = write_settings({"policy": {"presets": ["everything"]}}, co_dirs)
    shown = co("policy", cwd=tmp_path)
    assert shown.returncode != 0 and "Traceback" not in shown.stderr
    assert f"{settings}: policy.presets" in shown.stderr and "unknown preset" in shown.stderr


@pytest.fixture
def preset_engine(co_dirs: Path, tmp_path: Path) -> Any:
    return engine_for(tmp_path, presets=["read-only"])


READS = [
    "ls -la src", "git status", "rg TODO", "cat README.md | grep -n install", "git log -p -1",
    "find . -name '*.py' -newer x", "sed -n 1,5p x", "sed -n '1p;$p' x", "sort -u x",
    "wc -l src/*.py", "git diff --stat HEAD~1", "jq .name package.json", "head -20 x",
    "LC_ALL=C sort -k2 x", "grep -c x < x", "ls 2>/dev/null", "uniq -c x",
]  # fmt: skip
WRITES_OR_RUNS = [
    "find . -delete", "sed -i s/a/b/ x", "sort -o x x", "git -c core.pager=x log",
    "rg --pre ./x TODO", "git config core.pager x", "git branch -D main", "ls > out",
    "awk 'BEGIN{system(\"id\")}'", "tar -xf a.tar", "rm -rf build", "python3 -c 1",
    "echo -delete | xargs find .", "env PATH=tools ls", "git diff --output=x",
    "awk '{print $1}' x", "sed 's/a/b/' x", "env ls", "xargs ls", "uniq x y",
]  # fmt: skip


@pytest.mark.parametrize(
    "command, effect", [(c, "allow") for c in READS] + [(c, "ask") for c in WRITES_OR_RUNS]
)
def test_the_preset_runs_what_reads_and_asks_about_what_writes_or_runs(
    preset_engine: Any, command: str, effect: str
) -> None:
    decision = preset_engine.decide(call(preset_engine, "run_shell", cmd=command))
    assert decision.effect == effect, (command, decision.reason)
    assert decision.read_only == (effect == "allow")  # what the preset allows runs read-only


def test_the_reason_says_what_the_table_does_not_list(preset_engine: Any) -> None:
    reasons = {
        "sed --e='w X' x": "--e is not an option the read-only preset lists for sed "
        "(options are taken only spelled out in full)",
        "uniq -- -z OUT": "OUT: uniq takes at most 1 operand(s) in this preset",
        "git status -sb --output=x": "--output is not an option the read-only preset lists",
        "awk 1 x": "the read-only preset does not list awk",
        "sed -n 'w X' x": "'w X' is not lines to print",
        "grep foo* x": "foo* is a file pattern where one PATTERN goes",
        "git log -5 --pretty=x --ext-diff": "--ext-diff is not an option",
    }
    for command, why in reasons.items():
        decision = preset_engine.decide(call(preset_engine, "run_shell", cmd=command))
        assert decision.effect == "ask" and why in decision.reason, (command, decision.reason)
        assert "the read-only preset does not cover it" in decision.reason


def test_a_command_allowed_partly_by_the_users_rules_does_not_run_read_only(
    co_dirs: Path, tmp_path: Path
) -> None:
    mine = [{"match": "shell:exec:make *", "effect": "allow"}]
    engine = engine_for(tmp_path, presets=["read-only"], user_rules=mine)
    both = engine.decide(call(engine, "run_shell", cmd="ls && make build"))
    assert both.allowed and not both.read_only
    alone = engine.decide(call(engine, "run_shell", cmd="ls"))
    assert alone.allowed and alone.read_only


def test_the_users_own_rules_override_the_preset(co_dirs: Path, tmp_path: Path) -> None:
    deny = [{"match": "shell:exec:git *", "effect": "deny", "reason": "no git"}]
    engine = engine_for(tmp_path, presets=["read-only"], user_rules=deny)
    decision = engine.decide(call(engine, "run_shell", cmd="git status"))
    assert (decision.effect, decision.reason) == ("deny", "no git")
    # a rule of the user's for sed keeps Co's program knowledge: -i is still asked
    mine = [{"match": "shell:exec:sed *", "effect": "allow"}]
    engine = engine_for(tmp_path, presets=["read-only"], user_rules=mine)
    wide = engine.decide(call(engine, "run_shell", cmd="sed s/a/b/ x"))
    assert wide.allowed and not wide.read_only
    assert engine.decide(call(engine, "run_shell", cmd="sed -i s/a/b/ x")).effect == "ask"


def test_the_table_lists_no_argument_co_knows_to_write_or_run() -> None:
    """Co's program knowledge (which guards the user's own rules) and the table agree:
    no row lists an option that knowledge calls dangerous."""
    clashes = []
    for row in ROWS:
        spec = PROGRAMS.get(row.program)
        if spec is None:
            continue
        clashes += [f"{row.name} {name}" for name in row.by_name if name in spec.danger]
    assert clashes == []


def test_every_row_is_well_formed() -> None:
    """A name listed twice in one row, or an option the row's reader cannot take apart,
    would make the table say two things."""
    for row in ROWS:
        names = [n for option in row.options for n in option.names]
        assert len(names) == len(set(names)), row.name
        for name in names:
            assert re.fullmatch(r"-[A-Za-z0-9]|-[A-Za-z0-9]{2,}|--[a-z0-9][a-z0-9-]*", name)
            if row.style in ("getopt", "builtin", "git", "gitrev", "jq") and len(name) > 2:
                assert name.startswith("--") or name == "-vv", name
    assert READ_ONLY.cover(["ls", "-la"]) == ROWS[0]


def _generated_block(docs: str, command: str) -> list[str]:
    """The lines docs/policy.md holds between ``<!-- generated: COMMAND -->`` and
    ``<!-- end generated -->``."""
    start = f"<!-- generated: {command} -->"
    assert docs.count(start) == 1, start
    block = docs.split(start, 1)[1].split("<!-- end generated -->", 1)
    assert len(block) == 2, f"{start} has no end"
    return block[0].strip("\n").splitlines()


def test_the_docs_print_the_table_as_it_is() -> None:
    """docs/policy.md's table is the table Co decides with, line by line: one line per
    row, in the table's order, nothing added, nothing left out."""
    command = "uv run python -m co_core.policy.read_only"
    printed = _generated_block((ROOT / "docs" / "policy.md").read_text(), command)
    current = markdown().splitlines()
    for number, (line, want) in enumerate(zip(printed, current, strict=False), 1):
        assert line == want, f"docs/policy.md table line {number} is stale; regenerate: {command}"
    assert len(printed) == len(current), (
        f"the docs' table has {len(printed)} lines, not {len(current)}"
    )
    rows = [line.split(" | ")[0].removeprefix("| `").removesuffix("`") for line in printed[2:]]
    assert rows[: len(ROWS)] == [row.name for row in ROWS]


def test_what_the_docs_say_the_preset_leaves_out_asks(preset_engine: Any) -> None:
    """Every example of docs/policy.md's 'does not cover' table asks (none is allowed by
    the preset), and the first one of each line asks for the reason the table quotes."""
    docs = (ROOT / "docs" / "policy.md").read_text()
    section = docs.split("### What the preset does not cover", 1)[1].split("\n\n", 2)[2]
    lines = [line for line in section.split("\n\n", 1)[0].splitlines()[2:]]
    assert len(lines) >= 8
    checked = 0
    for line in lines:
        _, examples, reasons = line.strip("|").split(" | ")
        commands = [c for c in re.findall(r"`([^`]+)`", examples) if "…" not in c]
        quoted = re.findall(r"`([^`]+)`", reasons)[0].split("…")[-1].strip(" /")
        for n, command in enumerate(commands):
            decision = preset_engine.decide(call(preset_engine, "run_shell", cmd=command))
            assert decision.effect == "ask" and not decision.read_only, command
            checked += 1
            if n == 0:
                assert quoted.rstrip(")") in decision.reason, (command, decision.reason)
    assert checked >= 30


def test_codex_rules_restated_give_codex_verdict_on_every_case() -> None:
    """bench/compare_codex.py --generated judges Co's generated forms by Codex's rules as it
    restates them; on every case whose verdict Codex's tests (or beyond.json) state, the
    restatement gives that verdict."""
    compare = _compare_module()
    cases = json.loads((ROOT / "bench" / "codex" / "command_safety.json").read_text())["cases"]
    cases += json.loads((ROOT / "bench" / "codex" / "beyond.json").read_text())["cases"]
    wrong = [c for c in cases if compare.codex_runs(c["argv"]) != (c["codex"] == "safe")]
    assert wrong == [] and len(cases) >= 100
    assert compare.codex_runs(["sed", "-n", "1,5p", "x"])
    assert not compare.codex_runs(["sed", "-n", "1,5p;w x", "x"])


def test_every_command_co_runs_that_codex_asks_about_is_explained_in_the_docs(
    co_dirs: Path,
) -> None:
    """The comparison in docs/policy.md is the one the script prints (no drift either way)."""
    compare = _compare_module()
    rows = compare.compare()
    looser = [r for r in rows if r.co == "allow" and r.codex == "unsafe"]
    assert all(r.why for r in looser), [r.command for r in looser if not r.why]
    stricter = [r for r in rows if r.co != "allow" and r.codex == "safe" and not r.beyond]
    assert [r.command for r in stricter] == []  # Codex's own tests: its safe list is covered
    docs = (ROOT / "docs" / "policy.md").read_text()
    table = re.findall(r"^\| `(.+?)` \| asks \| runs \|", docs, re.MULTILINE)
    assert sorted(t.replace("\\|", "|") for t in table) == sorted({r.command for r in looser})
    reverse = re.findall(r"^\| `(.+?)` \| runs \| asks \|", docs, re.MULTILINE)
    stricter = [r for r in rows if r.co != "allow" and r.codex == "safe"]
    assert sorted(t.replace("\\|", "|") for t in reverse) == sorted({r.command for r in stricter})
    assert "uv run python bench/compare_codex.py" in docs
