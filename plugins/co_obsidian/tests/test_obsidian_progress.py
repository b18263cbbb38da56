"""The index build's progress bar: shown on a terminal, never in pipes or logs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pexpect
from obsidian_vaults import write

BUILD = """
import sys
from pathlib import Path
from co_obsidian import progress
from co_obsidian.index import VaultIndex
progress.SHOW_AFTER = 0  # as if the build were slow
index = VaultIndex(Path(sys.argv[1]), Path(sys.argv[2]))
print("indexed", index.refresh()["added"])
"""


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    for i in range(1200):
        write(vault, f"n{i}.md", f"note {i}")
    return vault


def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    child = pexpect.spawn(
        sys.executable,
        ["-c", BUILD, str(vault), str(tmp_path / "i.sqlite")],
        encoding="utf-8",
        timeout=120,
        dimensions=(24, 120),
    )
    child.expect("Indexing Obsidian vault")
    child.expect("indexed 1200")
    child.expect(pexpect.EOF)


def test_no_progress_bar_when_not_a_terminal(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", BUILD, str(vault), str(tmp_path / "i.sqlite")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.strip() == "indexed 1200"
    assert done.stderr == ""
