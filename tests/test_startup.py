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
HELP_HEAVY = (*HEAVY, "pydantic", "rich.markdown", "sqlite3", "tree_sitter", "packaging")

PROBE = """
import sys
sys.argv = ["co", *{args!r}]
from co_core.cli.main import main
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
    heavy = HELP_HEAVY if args[0] in ("--help", "--version") else HEAVY
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args, heavy=heavy)],
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


# Records what the main thread imports before the background thread's first import (which
# comes right after the first prompt is drawn), then lets `co chat` run as usual.
CHAT_PROBE = """
import atexit, os, sys, threading
before_prompt, background = [], []

def audit(event, args):
    if event != "import":
        return
    if threading.current_thread() is not threading.main_thread():
        background.append(args[0])
    elif not background:
        before_prompt.append(args[0])

sys.addaudithook(audit)
atexit.register(lambda: open(os.environ["PROBE_OUT"], "w").write("\\n".join(before_prompt)))
sys.argv = ["co", "chat", "-m", "function:co_scripts:chat"]
from co_core.cli.main import main
main()
"""


def test_nothing_heavy_stands_in_front_of_the_chat_prompt(testplug: Path, tmp_path: Path) -> None:
    import os

    import pexpect

    out = tmp_path / "imports.txt"
    child = pexpect.spawn(
        sys.executable,
        ["-c", CHAT_PROBE],
        env={**os.environ, "PROBE_OUT": str(out)},
        encoding="utf-8",
        timeout=60,
    )
    child.expect("co>")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    imported = set(out.read_text().split())
    assert "prompt_toolkit" in imported  # the probe saw the start-up imports
    # settings are validated, rich loaded and the agent built after the prompt appears
    heavy = ("pydantic", "pydantic_core", "pydantic_ai", "rich", "opentelemetry", *HEAVY)
    assert not {m for m in imported for h in heavy if m == h or m.startswith(h + ".")}
