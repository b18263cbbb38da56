"""Persisted grants: "always for this project" answers, kept per project in the data dir.

They live in the user's data dir (``policy/grants.json``, mode 0600), not in the project,
so a cloned repository can never ship grants of its own. A grant is the exact permission
key that was approved, never a pattern: "always" to ``rm -rf build/*`` or to a file named
``*`` covers that very key and nothing beside it (its rule is the key with glob characters
escaped). Files written before grants were exact hold ``match`` instead of ``key``; those
are read the same way, as the exact key they were made from. Each grant remembers the tool
it was given for, so a plugin upgrade that changes that tool can drop it (see fingerprints).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from co_core.kernel import paths
from co_core.policy.globs import escape
from co_core.policy.rules import EFFECTS, Rule


def grants_file() -> Path:
    return paths.data_dir() / "policy" / "grants.json"


def _load() -> dict[str, Any]:
    try:
        data = json.loads(grants_file().read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {"projects": {}}
    if not isinstance(data, dict) or not isinstance(data.get("projects"), dict):
        return {"projects": {}}
    return data


def _save(data: dict[str, Any]) -> None:
    paths.write_private(grants_file(), json.dumps(data, indent=2, sort_keys=True) + "\n")


def _key(entry: Any) -> str | None:
    """The exact key of a stored grant (``match`` in files from before grants were exact)."""
    if not isinstance(entry, dict):
        return None
    key = entry.get("key", entry.get("match"))
    return key if isinstance(key, str) and key else None


def _entries(data: dict[str, Any], project: str) -> list[dict[str, Any]]:
    entries = data["projects"].get(project, [])
    return [e for e in entries if _key(e) is not None] if isinstance(entries, list) else []


def load_grants(project: Path) -> list[Rule]:
    rules = []
    for entry in _entries(_load(), str(project)):
        if entry.get("effect") not in EFFECTS:
            continue
        day = str(entry.get("time", "?"))[:10]
        rules.append(
            Rule(
                escape(_key(entry) or ""),
                entry["effect"],
                "grant",
                f"granted {day} for {project}",
                reason=f"you approved this for {project} on {day}",
                tool=entry.get("tool"),
            )
        )
    return rules


def add_grant(project: Path, key: str, effect: str = "allow", tool: str | None = None) -> None:
    """Keep ``key`` (exactly that key) for ``project``."""
    data = _load()
    entries = [
        {k: v for k, v in e.items() if k != "match"} | {"key": _key(e)}
        for e in _entries(data, str(project))
        if _key(e) != key
    ]
    entries.append(
        {
            "key": key,
            "effect": effect,
            "tool": tool,
            "time": datetime.now(UTC).isoformat(timespec="seconds"),
        }
    )
    data["projects"][str(project)] = entries
    _save(data)


def remove_grants(*, tools: set[str] | None = None, key: str | None = None) -> int:
    """Drop grants (in every project) for these tools, or for this key (as listed by
    ``co policy grants``, or its escaped pattern)."""
    data = _load()
    removed = 0
    for project in list(data["projects"]):
        kept = []
        for entry in _entries(data, project):
            if (tools is not None and entry.get("tool") in tools) or (
                key is not None and key in (_key(entry), escape(_key(entry) or ""))
            ):
                removed += 1
                continue
            kept.append(entry)
        data["projects"][project] = kept
    if removed:
        _save(data)
    return removed
