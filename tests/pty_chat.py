"""`co chat` in a real pty for tests that start it themselves (own model, own folder)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect

CO = str(Path(sys.executable).parent / "co")


@contextmanager
def co_chat(*args: str, cwd: Path, timeout: float = 180) -> Iterator[pexpect.spawn]:
    """``co chat ARGS`` with this process's environment; ended if the test leaves it running."""
    child = pexpect.spawn(
        CO, ["chat", *args], env=dict(os.environ), cwd=str(cwd), encoding="utf-8",
        timeout=timeout, dimensions=(40, 250),
    )  # fmt: skip
    try:
        yield child
    finally:
        if child.isalive():
            child.terminate(force=True)


def leave(child: pexpect.spawn) -> None:
    """Ctrl+D at a prompt drawn anew (a key pressed while a line is printed above the
    prompt can be lost), then the end of the process."""
    child.expect("co>")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
