"""Persisted grants: "always for this project" answers, kept per project in the data dir.

They live in the user's data dir (``policy/grants.json``, mode 0600), not in the project,
so a cloned repository can never ship grants of its own. Each grant remembers the tool it
was given for, so a plugin upgrade that changes that tool can drop it (see fingerprints).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from co_core.kernel import paths
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


def load_grants(project: Path) -> list[Rule]:
    entries = _load()["projects"].get(str(project), [])
    rules = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("effect") not in EFFECTS:
            continue
        if not isinstance(entry.get("match"), str) or not entry["match"]:
            continue
        rules.append(
            Rule(
                entry["match"],
                entry["effect"],
                "grant",
                f"granted {str(entry.get('time', '?'))[:10]} for {project}",
                reason=f"you approved this for {project} on {str(entry.get('time', '?'))[:10]}",
                tool=entry.get("tool"),
            )
        )
    return rules


def add_grant(project: Path, match: str, effect: str = "allow", tool: str | None = None) -> None:
    data = _load()
    entries = [
        e
        for e in data["projects"].get(str(project), [])
        if isinstance(e, dict) and e.get("match") != match
    ]
    entries.append(
        {
            "match": match,
            "effect": effect,
            "tool": tool,
            "time": datetime.now(UTC).isoformat(timespec="seconds"),
        }
    )
    data["projects"][str(project)] = entries
    _save(data)


def remove_grants(*, tools: set[str] | None = None, match: str | None = None) -> int:
    """Drop grants (in every project) for these tools, or with this exact pattern."""
    data = _load()
    removed = 0
    for project, entries in list(data["projects"].items()):
        kept = []
        for entry in entries if isinstance(entries, list) else []:
            if (tools is not None and entry.get("tool") in tools) or (
                match is not None and entry.get("match") == match
            ):
                removed += 1
                continue
            kept.append(entry)
        data["projects"][project] = kept
    if removed:
        _save(data)
    return removed
