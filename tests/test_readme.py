"""What README.md tells a new user is what they see (issue 36.4, 36.7).

The install and test commands themselves run in CI (``.ci/run`` runs the test command read
from the README); here: what it says about the default model is what Co offers and
``co models list`` marks, and ``co`` works the ways it says (``uv run co``, the
``.venv``'s ``co`` linked onto the PATH), without a line about compiling bytecode.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from co_core.agent.local import catalog
from co_core.testing import run_co

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _paragraph(about: str) -> str:
    return " ".join(next(p for p in README.split("\n\n") if about in p).split())


def test_the_default_local_model_is_what_co_offers_and_lists() -> None:
    said = _paragraph("The `local` model is")
    offered = catalog.DEFAULT
    assert offered.title.split(" (")[0] in said  # Qwen2.5-1.5B-Instruct
    assert catalog.human_size(offered.size) in said  # 1.1 GB
    assert "SmolLM2-135M" in said and "built-in" in said
    listed = run_co("models", "list", env={"COLUMNS": "200"})
    assert listed.returncode == 0, listed.stderr
    [marked] = [line for line in listed.stdout.splitlines() if "(default)" in line]
    assert offered.name in marked


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
def test_uv_run_co_works_from_the_clone_and_says_nothing_else() -> None:
    assert "`uv run co status`" in README
    done = subprocess.run(
        ["uv", "run", "co", "--version"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"co \S+\n", done.stdout)
    assert "Bytecode compiled" not in done.stderr  # not on every run (astral-sh/uv#12202)


def test_the_venvs_co_linked_onto_the_path_works_anywhere(tmp_path: Path) -> None:
    assert 'ln -s "$PWD/.venv/bin/co" ~/.local/bin/co' in README
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "co").symlink_to(Path(sys.executable).parent / "co")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"}
    done = subprocess.run(
        ["co", "--version"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("co ")
