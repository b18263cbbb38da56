"""Every code example in the plugin author guide is a tested file's, and runs as shown.

Each block is run on its own, copied as it is into a fresh folder, beside the guide's
example written by ``co plugin example`` (what a reader has after the tutorial): modules
must execute and leave no name undefined, tests must pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from doc_snippets import ROOT, Snippet, snippets, unmarked_code

from co_core.testing import run_co

GUIDE = ROOT / "docs" / "plugins.md"
SNIPPETS = snippets(GUIDE)


def _id(snippet: Snippet) -> str:
    return f"{Path(snippet.path).name}#{snippet.region or 'file'}"


def test_the_guide_has_snippets() -> None:
    assert len(SNIPPETS) >= 15


@pytest.mark.parametrize("snippet", SNIPPETS, ids=_id)
def test_snippet_matches_its_source(snippet: Snippet) -> None:
    assert snippet.shown == snippet.source, (
        f"run `uv run python tests/doc_snippets.py` ({snippet.path}#{snippet.region} changed)"
    )


def test_no_pasted_code() -> None:
    assert unmarked_code(GUIDE) == [], "python/toml blocks in docs/plugins.md need a snippet marker"


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``co plugin example``'s co-todo: what a reader of the tutorial has written."""
    parent = tmp_path_factory.mktemp("reader")
    made = run_co("plugin", "example", "--dir", str(parent))
    assert made.returncode == 0, made.stderr
    return parent / "co-todo"


@pytest.mark.parametrize("snippet", SNIPPETS, ids=_id)
def test_snippet_runs_as_copied(snippet: Snippet, example: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    if snippet.lang == "toml":
        assert tomllib.loads(snippet.shown)["project"]["entry-points"]["co"]
        return
    assert snippet.lang == "python", snippet
    name = "test_snippet.py" if snippet.is_test else "snippet.py"
    (fresh / name).write_text(snippet.shown, encoding="utf-8")
    undefined = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--isolated",
            "--no-cache",
            "--select",
            "F821",
            name,
        ],
        cwd=fresh,
        capture_output=True,
        text=True,
    )
    assert undefined.returncode == 0, undefined.stdout  # a name the block uses but never gets
    env = {k: v for k, v in os.environ.items() if not k.startswith("CO_")}
    env["PYTHONPATH"] = str(example)
    for kind in ("config", "data", "cache"):
        (tmp_path / kind).mkdir()
        env[f"CO_{kind.upper()}_DIR"] = str(tmp_path / kind)
    if snippet.is_test:
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", name]
    else:
        argv = [sys.executable, name]
    done = subprocess.run(argv, cwd=fresh, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    if snippet.is_test:
        assert "1 passed" in done.stdout, done.stdout
