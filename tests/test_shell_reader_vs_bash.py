"""Co's reader against bash on generated spellings (quotes, escapes, line continuations,
comments, here-documents of every delimiter quoting, ``$'…'``): where Co reads a command
as fixed, bash starts exactly the programs Co named, for the text as written and for Co's
own spelling of it. (bench/shell_parsers.py runs the same comparison for bashlex and
tree-sitter-bash too.)"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from co_core.policy.shell import read_script

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def parsers() -> Any:
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (apt install strace)")
    spec = importlib.util.spec_from_file_location(
        "shell_parsers", ROOT / "bench" / "shell_parsers.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def stubs(parsers: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    root = tmp_path_factory.mktemp("bash-stubs")
    bin_dir, work = root / "bin", root / "work"
    bin_dir.mkdir()
    work.mkdir()
    for name in [*parsers.PROGRAMS, "_missing"]:
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    yield bin_dir, work


def test_where_co_reads_a_command_bash_runs_what_co_named(parsers: Any, stubs: Any) -> None:
    disagree, fixed = [], 0
    for command in parsers.generate(250, seed=26):
        truth = parsers.bash_runs(command, *stubs)
        seen = parsers.co_reads(command)
        if truth is None or seen is None:
            continue
        fixed += 1
        canonical = read_script(command).canonical
        respelled = parsers.bash_runs(canonical, *stubs)
        if seen != truth or respelled != truth:
            disagree.append(f"{command!r}: bash {truth}, Co {seen}, Co's spelling {respelled}")
    assert disagree == [], "\n".join(disagree)
    assert fixed >= 50  # the generator does reach commands Co reads
