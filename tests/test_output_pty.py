"""What ``co chat`` shows of files and command output, read off a real terminal's screen.

``co chat`` runs in a pty with a scripted model that quotes what a tool returned without a
fence (as models do); a terminal emulator (pyte) draws what the user would see. Files come
from co-shell's real ``read_file``, command output from a real bubblewrap sandbox.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tempfile
from pathlib import Path

import pexpect
import pyte
import pytest
from verbatim_samples import NOTES, PYTHON

PROMPT = "co>"
ROWS, COLUMNS = 60, 120


def screen_of(raw: str) -> list[str]:
    """The terminal's lines after ``raw`` was written to it (trailing blanks dropped)."""
    screen = pyte.HistoryScreen(COLUMNS, ROWS, history=2000)
    pyte.Stream(screen).feed(raw)
    top = ["".join(ch.data for ch in line.values()) for line in screen.history.top]
    return [line.rstrip() for line in [*top, *screen.display]]


def block(lines: list[str], start: str, end: str) -> list[str]:
    """The lines between the last line equal to ``start`` and the next equal to ``end``."""
    first = max(i for i, line in enumerate(lines) if line == start)
    last = lines.index(end, first)
    return lines[first + 1 : last]


@pytest.fixture
def shell_chat(chat, monkeypatch: pytest.MonkeyPatch):
    """``co chat`` with co-shell in a workspace the sandbox user can use; returns
    (spawn, workspace). Every byte the terminal receives is kept in ``child.seen``."""
    monkeypatch.setenv("CO_LOAD_PLUGINS", "testplug,shell")
    monkeypatch.setenv("CO_SHELL_SANDBOX", "bubblewrap")
    workspace = Path(tempfile.mkdtemp(prefix="co-out-"))
    workspace.chmod(0o755)

    def spawn(*args: str) -> pexpect.spawn:
        child = chat(*args, cwd=workspace)
        child.seen = io.StringIO()
        child.logfile_read = child.seen
        return child

    yield spawn, workspace
    shutil.rmtree(workspace, ignore_errors=True)


def chown_for_sandbox(path: Path) -> None:
    """As root, commands run as uid 1000: it must be able to read the workspace."""
    if os.getuid() == 0:
        for item in [path, *path.rglob("*")]:
            os.lchown(item, 1000, 1000)


@pytest.mark.parametrize("name, text", [("report.py", PYTHON), ("notes_v2.txt", NOTES)])
def test_a_file_read_back_is_shown_line_for_line(shell_chat, name: str, text: str) -> None:
    spawn, workspace = shell_chat
    (workspace / name).write_text(text)
    child = spawn()
    child.sendline(f"readfile {name}")
    child.expect("That is all.")
    child.expect(PROMPT)
    lines = screen_of(child.seen.getvalue())
    assert block(lines, "Here it is:", "That is all.")[1:-1] == text.rstrip("\n").splitlines()
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


@pytest.mark.parametrize("name, text", [("report.py", PYTHON), ("notes_v2.txt", NOTES)])
def test_co_s_own_answer_built_from_a_file_is_shown_as_it_is(shell_chat, name, text) -> None:
    """A tiny model's turn: Co answers with what read_file returned (docs/chat.md)."""
    spawn, workspace = shell_chat
    (workspace / name).write_text(text)
    child = spawn("-m", "function:co_scripts:small")
    child.sendline(f"readfile {name}")
    child.expect(r"\d+ in · \d+ out tokens")
    child.expect(PROMPT)
    lines = screen_of(child.seen.getvalue())
    expected = text.rstrip("\n").splitlines()
    start = lines.index(expected[0])  # at the left edge: the answer, not the indented preview
    assert lines[start : start + len(expected)] == [line.rstrip() for line in expected]
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_long_output_is_shown_up_to_a_limit_and_whole_with_output(shell_chat) -> None:
    spawn, workspace = shell_chat
    text = "".join(f"row_{i:02d}  =  {'x' * (i % 7)}\n" for i in range(1, 41))
    (workspace / "long.txt").write_text(text)
    child = spawn()
    child.sendline("readfile long.txt")
    child.expect("That is all.")
    child.expect(PROMPT)
    lines = screen_of(child.seen.getvalue())
    call = lines.index("⚙ read_file(path=long.txt)")
    rows = [row.rstrip() for row in text.splitlines()]
    assert lines[call + 1] == "  → " + rows[0]
    assert lines[call + 2 : call + 13] == ["    " + row for row in rows[1:12]]
    assert lines[call + 13] == "    … 28 more lines (/output shows them all)"
    child.sendline("/output")
    child.expect(r"row_40")
    child.expect(PROMPT)
    lines = screen_of(child.seen.getvalue())
    shown = lines[max(i for i, line in enumerate(lines) if line.startswith("⚙ read_file")) :]
    assert shown[1:41] == rows
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_ls_la_in_the_sandbox_keeps_its_lines(shell_chat) -> None:
    spawn, workspace = shell_chat
    for name in ("report.py", "notes_v2.txt", "__init__.py"):
        (workspace / name).write_text("x = 1\n")
    (workspace / "sub_dir").mkdir()
    chown_for_sandbox(workspace)
    child = spawn()
    child.sendline("shell ls -la")
    child.expect(r"Allow\?")
    child.sendline("y")
    child.expect("That is all.", timeout=120)
    child.expect(PROMPT)
    lines = screen_of(child.seen.getvalue())
    listing = block(lines, "Here it is:", "That is all.")[1:-1]
    assert listing[0].startswith("total ")
    entries = listing[1:]
    assert all(re.match(r"^[-dl][-rwxsStT]{9}\S*\s+\d+\s", line) for line in entries), listing
    names = {line.split()[-1] for line in entries}  # (the sandbox may add .git/.co guards)
    assert {".", "..", "__init__.py", "notes_v2.txt", "report.py", "sub_dir"} <= names
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
