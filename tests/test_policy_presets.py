"""The read-only preset: turned on by the user, overridden by the user's own rules, and
compared with a public peer's list (OpenAI Codex's command-safety tests)."""

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


def test_the_preset_is_turned_on_listed_and_off_again(co_dirs: Path, tmp_path: Path) -> None:
    listed = co("policy", "preset", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"read-only\s+.\s*off", listed.stdout)
    turned = co("policy", "preset", "read-only", cwd=tmp_path)
    assert turned.returncode == 0, turned.stderr
    assert "shell:exec:git status *" in turned.stdout
    assert json.loads((co_dirs / "settings.json").read_text())["policy"]["presets"] == ["read-only"]
    rules = json.loads(co("policy", "--json", cwd=tmp_path).stdout)["default"]
    assert {"match": "shell:exec:rg *", "effect": "allow", "origin": "preset read-only",
            "reason": "the read-only preset"} in rules  # fmt: skip
    explained = co("policy", "explain", "shell:exec:find . -name x -delete", cwd=tmp_path)
    assert "ASK" in explained.stdout and "-delete deletes files" in explained.stdout
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
    "find . -name '*.py' -newer x", "sed -n 1,5p x", "awk '{print $1}' x", "sort -u x",
    "wc -l src/*.py", "git diff --stat HEAD~1", "jq .name package.json",
]  # fmt: skip
WRITES_OR_RUNS = [
    "find . -delete", "sed -i s/a/b/ x", "sort -o x x", "git -c core.pager=x log",
    "rg --pre ./x TODO", "git config core.pager x", "git branch -D main", "ls > out",
    "awk 'BEGIN{system(\"id\")}'", "tar -xf a.tar", "rm -rf build", "python3 -c 1",
    "echo -delete | xargs find .", "env PATH=tools ls", "git diff --output=x",
]  # fmt: skip


@pytest.mark.parametrize(
    "command, effect", [(c, "allow") for c in READS] + [(c, "ask") for c in WRITES_OR_RUNS]
)
def test_the_preset_runs_what_reads_and_asks_about_what_writes_or_runs(
    preset_engine: Any, command: str, effect: str
) -> None:
    decision = preset_engine.decide(call(preset_engine, "run_shell", cmd=command))
    assert decision.effect == effect, (command, decision.reason)


def test_the_users_own_rules_override_the_preset(co_dirs: Path, tmp_path: Path) -> None:
    deny = [{"match": "shell:exec:git *", "effect": "deny", "reason": "no git"}]
    engine = engine_for(tmp_path, presets=["read-only"], user_rules=deny)
    decision = engine.decide(call(engine, "run_shell", cmd="git status"))
    assert (decision.effect, decision.reason) == ("deny", "no git")


def test_every_command_co_runs_that_codex_asks_about_is_explained_in_the_docs(
    co_dirs: Path,
) -> None:
    """The comparison in docs/policy.md is the one the script prints (no drift either way)."""
    compare = _compare_module()
    rows = compare.compare()
    looser = [r for r in rows if r.co == "allow" and r.codex == "unsafe"]
    assert all(r.why for r in looser), [r.command for r in looser if not r.why]
    stricter = [r for r in rows if r.co != "allow" and r.codex == "safe"]
    assert [r.command for r in stricter] == []  # Codex's safe list is covered
    docs = (ROOT / "docs" / "policy.md").read_text()
    table = re.findall(r"^\| `(.+?)` \| asks \| runs \|", docs, re.MULTILINE)
    assert sorted(t.replace("\\|", "|") for t in table) == sorted({r.command for r in looser})
    assert "uv run python bench/compare_codex.py" in docs
