"""The audit trail: one JSONL file per session in the data dir, secrets masked first.

Every policy decision, every answer the user gives to an approval prompt and every tool
execution is one line. Lines pass through :class:`co_core.redact.Redactor` before they
are written, so a secret in a tool's arguments, a permission key or an error message
never reaches the disk. Files older than ``policy.audit_days`` are pruned when a log opens.

A line about a call that changes something is in the file before the call runs. Lines
about read-only calls may be written ``soon``: together, when the event loop is next
free (a model's batch of parallel reads costs one ``write``, not two per call).
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

from co_core import paths
from co_core.redact import Redactor

_SAFE_ID = re.compile(r"[^A-Za-z0-9_.\-]")


def _encode(line: Mapping[str, Any]) -> bytes:
    """One JSON line, UTF-8 (pydantic-core's encoder: a third of the json module's time)."""
    from pydantic_core import to_json

    return to_json(line, fallback=str) + b"\n"


_second: tuple[int, str] = (0, "")  # the last whole second seen and its ISO text


def _now() -> str:
    """UTC now with milliseconds, as ``datetime.isoformat`` writes it; the text of the
    second is formatted once per second (two lines per tool call land in the same one)."""
    global _second
    now = time.time()
    second, text = _second
    if second != int(now):
        second = int(now)
        text = datetime.fromtimestamp(second, UTC).isoformat()[:-6]  # without "+00:00"
        _second = (second, text)
    return f"{text}.{int((now - second) * 1000):03d}+00:00"


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

    # Pruning deletes only files not written to for a day or more (policy.audit_days >= 1),
    # so while lines keep coming the file cannot have been pruned; whether it still
    # exists is checked again (one fstat) only after this long without a line.
    recheck_after = 3600.0

    def __init__(
        self, session_id: str, redactor: Redactor | None = None, *, days: int = 30
    ) -> None:
        self.session_id = session_id
        self.redactor = redactor or Redactor()
        self.path = audit_file(session_id)
        self._fd: int | None = None  # opened on the first line, kept open (one write per line)
        self._written = 0.0  # time.monotonic() of the last line
        self._lock = threading.Lock()
        self._held: list[bytes] = []  # ``soon`` lines waiting for the event loop's next pass
        self._flush_scheduled = False
        prune(days)

    def write(self, event: str, fields: Mapping[str, Any], *, soon: bool = False) -> dict[str, Any]:
        """Append one line; it is in the file (written, unbuffered) when this returns, with
        any lines held before it. ``soon``: inside a running event loop, it may instead be
        written when the loop is next free (see the module's docstring)."""
        # the time, the session id and the event name are Co's own, not content to mask
        clean = {"time": _now(), "session": self.session_id, "event": event}
        redact = self.redactor.value
        for name, value in fields.items():
            clean[str(name)] = redact(value, str(name))
        clean["session"] = self.session_id  # "session" is not a secret, whatever it looks like
        data = _encode(clean)
        with self._lock:
            if soon and self._schedule_flush():
                self._held.append(data)
                return clean
            if self._held:
                data = b"".join([*self._held, data])
                self._held = []
            self._append(data)
        return clean

    def flush(self) -> None:
        """Write the lines held for the event loop's next pass."""
        with self._lock:
            self._flush_scheduled = False
            if self._held:
                data, self._held = b"".join(self._held), []
                self._append(data)

    def _schedule_flush(self) -> bool:
        if self._flush_scheduled:
            return True
        import asyncio  # here, not at the top: `co audit` reads lines and runs no loop

        try:
            asyncio.get_running_loop().call_soon(self.flush)
        except RuntimeError:  # no event loop here: written at once
            return False
        self._flush_scheduled = True
        return True

    def _append(self, data: bytes) -> None:
        fd = self._open()
        while data:  # O_APPEND: each write lands at the end, whoever else appends
            data = data[os.write(fd, data) :]

    def _open(self) -> int:
        """The file's descriptor, reopened if the file was deleted meanwhile (pruned)."""
        now = time.monotonic()
        if self._fd is not None:
            if now - self._written < self.recheck_after:
                self._written = now
                return self._fd
            try:
                if os.fstat(self._fd).st_nlink > 0:
                    self._written = now
                    return self._fd
            except OSError:
                pass
            self._close()
        self._written = now
        paths.ensure(self.path.parent)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return self._fd

    def _close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def close(self) -> None:
        """Write any held lines and release the file."""
        self.flush()
        with self._lock:
            self._close()

    def __del__(self) -> None:
        if getattr(self, "_held", None):
            self.flush()
        if getattr(self, "_fd", None) is not None:
            self._close()

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
        soon: bool = False,
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
            soon=soon,
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
