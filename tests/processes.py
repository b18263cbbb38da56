"""Processes as the kernel lists them, for tests that check what a command left running."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def sleeping(marker: str) -> list[int]:
    """Processes running ``sleep MARKER``, wherever they run (a sandbox's and a Docker
    container's are in this machine's /proc too)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[:2] == [b"sleep", marker.encode()]:
                found.append(int(entry.name))
    return found


def eventually(check: Callable[[], object], limit: float = 60.0) -> bool:
    """Poll ``check`` until it holds (True) or ``limit`` seconds pass (False)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return bool(check())
