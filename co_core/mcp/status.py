"""One ``co status`` line per configured MCP server: started and listed its tools, or why not."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from co_core.kernel.status import CheckResult, fail, off, ok

CHECK_TIMEOUT = 15.0


def _names(cwd: Path) -> list[str]:
    """Server names in the user's and the project's settings files (names only: cheap)."""
    from co_core.kernel import paths, trust

    files = [paths.settings_file()]
    root = trust.project_root(cwd)
    if root is not None:
        files.append(root / ".co" / "settings.json")
    names: set[str] = set()
    for path in files:
        try:
            value = json.loads(path.read_text(encoding="utf-8")).get("mcp_servers", {})
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, dict):
            names.update(str(name) for name in value)
    return sorted(names)


def register_checks(register: Any) -> None:
    for name in _names(Path.cwd()):
        register(f"mcp {name}", partial(server_check, name), timeout=CHECK_TIMEOUT)


def server_check(name: str, settings: Any) -> CheckResult:
    from co_core.mcp.probe import probe_all
    from co_core.mcp.settings import declared_servers

    found = [d for d in declared_servers(settings, Path.cwd()) if d.name == name]
    if not found:
        return fail("not a valid server entry (see `co mcp list`)")
    declared = found[0]
    if declared.skipped:
        return off(f"not started: {declared.skipped}")
    at_most = CHECK_TIMEOUT - 5  # the check's own limit leaves time to say why
    result = probe_all([declared], workspace=Path.cwd(), settings=settings, at_most=at_most)[0]
    where = declared.server.describe()
    if result.ok:
        return ok(f"{result.detail} ({where})")
    return fail(f"{result.detail} ({where})")
