"""Fast start, checked structurally: light commands never import the heavy libraries.

(Timing lives in bench/startup.py; here we only check what gets imported.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "pydantic_ai",
    "mcp",
    "fastmcp",
    "googleapiclient",
    "slack_sdk",
    "docker",
    "opentelemetry.sdk",
    "llama_cpp",
)
# Printing help or the version needs no settings at all, so not even pydantic.
HELP_HEAVY = (*HEAVY, "pydantic", "rich.markdown", "sqlite3", "bashlex")

PROBE = """
import sys
sys.argv = ["co", *{args!r}]
from co_core.cli import main
try:
    main()
except SystemExit:
    pass
print("HEAVY:" + ",".join(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "args",
    [["--help"], ["--version"], ["plugins"], ["plugins", "--json"], ["status"], ["config", "show"]],
    ids=" ".join,
)
def test_light_commands_import_no_heavy_modules(co_dirs: Path, args: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args, heavy=HEAVY)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    heavy_line = [line for line in result.stderr.splitlines() if line.startswith("HEAVY:")]
    assert heavy_line, result.stderr
    assert heavy_line[0] == "HEAVY:", f"`co {' '.join(args)}` imported {heavy_line[0][6:]}"
    assert result.stdout  # it did print something


def test_all_bundled_plugins_are_loaded_when_checking(co_dirs: Path) -> None:
    # The probe above would be vacuous if plugins were not loaded at all.
    from co_core.testing import run_co

    assert run_co("plugins").stdout.count("loaded") >= 4
