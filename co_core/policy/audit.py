"""The audit trail: one JSONL file per session in the data dir, secrets masked first.

Every policy decision, every answer the user gives to an approval prompt and every tool
execution is one line, written (unbuffered) when it happens: a line about a call is in
the file before the call runs. Lines pass through :class:`co_core.kernel.redact.Redactor`
first, so a secret in a tool's arguments, a permission key or an error message never
reaches the disk. Files older than ``policy.audit_days`` are pruned when a log opens.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from co_core.kernel import paths
from co_core.kernel.redact import Redactor

_SAFE_ID = re.compile(r"[^A-Za-z0-9_.\-]")
EVENTS = ("decision", "answer", "execution")


def audit_dir() -> Path:
    return paths.data_dir() / "audit"


def audit_file(session_id: str) -> Path:
    name = _SAFE_ID.sub("_", session_id).lstrip(".") or "session"
    return audit_dir() / f"{name}.jsonl"


def prune(days: int, now: float | None = None) -> list[Path]:
    """Delete audit files not written to for ``days`` days; returns what was removed."""
    cutoff = (now if now is not None else time.time()) - days * 86400
    removed: list[Path] = []
    folder = audit_dir()
    if not folder.is_dir():
        return removed
    for path in folder.glob("*.jsonl"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed.append(path)
        except OSError:
            continue
    return removed


class AuditLog:
    """Appends redacted lines to this session's audit file."""

    def __init__(
        self, session_id: str, redactor: Redactor | None = None, *, days: int = 30
    ) -> None:
        self.session_id = session_id
        self.redactor = redactor or Redactor()
        self.path = audit_file(session_id)
        self._lock = threading.Lock()
        self._fd: int | None = None  # kept open for the session; reopened if pruned away
        prune(days)

    def write(self, event: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Append one line; it is in the file when this returns. Returns what was written."""
        # the time, the session id and the event name are Co's own, not content to mask
        line: dict[str, Any] = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "session": self.session_id,
            "event": event,
        }
        for name, value in fields.items():
            if name not in line:
                line[str(name)] = self.redactor.value(value, str(name))
        data = (json.dumps(line, ensure_ascii=False, default=str) + "\n").encode()
        with self._lock:
            fd = self._open()
            while data:  # O_APPEND: each write lands at the end, whoever else appends
                data = data[os.write(fd, data) :]
        return line

    def _open(self) -> int:
        """The file's descriptor; the file again if another Co pruned it meanwhile."""
        if self._fd is not None and os.fstat(self._fd).st_nlink > 0:
            return self._fd
        self.close()
        paths.ensure_dir(self.path.parent)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return self._fd

    def close(self) -> None:
        """Release the file (every line is already in it: nothing is held back)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def read_entries(session: str | None = None) -> Iterator[dict[str, Any]]:
    """Audit entries, oldest file first; unreadable lines are skipped."""
    folder = audit_dir()
    if not folder.is_dir():
        return
    files = [audit_file(session)] if session else sorted(folder.glob("*.jsonl"), key=_mtime)
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                yield entry


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
