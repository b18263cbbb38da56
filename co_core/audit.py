"""The audit trail: one JSONL file per session in the data dir, secrets masked first.

Every policy decision, every answer the user gives to an approval prompt and every tool
execution is one line. Lines pass through :class:`co_core.redact.Redactor` before they
are written, so a secret in a tool's arguments, a permission key or an error message
never reaches the disk. Files older than ``policy.audit_days`` are pruned when a log opens.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from co_core import paths
from co_core.redact import Redactor

_SAFE_ID = re.compile(r"[^A-Za-z0-9_.\-]")


def audit_dir() -> Path:
    return paths.data_dir() / "audit"


def audit_file(session_id: str) -> Path:
    name = _SAFE_ID.sub("_", session_id).lstrip(".") or "session"
    return audit_dir() / f"{name}.jsonl"


def prune(days: int, now: float | None = None) -> list[Path]:
    """Delete audit files not written to for ``days`` days; returns what was removed."""
    cutoff = (now if now is not None else time.time()) - days * 86400
    removed = []
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
        prune(days)

    def write(self, event: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        entry = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "session": self.session_id,
            "event": event,
            **fields,
        }
        clean = self.redactor.value(entry)
        clean["session"] = self.session_id  # "session" is not a secret, whatever it looks like
        line = json.dumps(clean, ensure_ascii=False, default=str, sort_keys=False) + "\n"
        paths.ensure(self.path.parent)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(line)
        return clean

    def execution(
        self,
        *,
        tool: str,
        plugin: str,
        key: str,
        status: str,
        duration: float,
        error: str | None = None,
        call_id: str | None = None,
    ) -> dict[str, Any]:
        """One tool run: status is "ok", "error" or "retry" (ModelRetry); duration in seconds."""
        return self.write(
            "execution",
            {
                "call_id": call_id,
                "plugin": plugin,
                "tool": tool,
                "permission": key,
                "status": status,
                "duration_ms": round(duration * 1000, 1),
                "error": error,
            },
        )


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
