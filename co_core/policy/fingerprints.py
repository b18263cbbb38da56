"""Notice plugin upgrades that widen what a plugin can do.

Co keeps each plugin's declared tools, risks and permission templates
(``ToolSpec.fingerprint()``) in the data dir. When a plugin later declares a new tool,
raises a tool's risk or changes its permission template, Co says so once and drops the
persisted grants for those tools, so they are asked again. A plugin seen for the first
time is recorded silently: installing it was the user's own choice.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from co_core.kernel import paths
from co_core.kernel.tools import ToolSpec
from co_core.policy.grants import remove_grants

# A tool with no declared risk is treated like the riskiest: its calls are always asked.
RISK_RANK = {"read": 0, "write": 1, "send": 2, "exec": 3, "None": 4}


def fingerprint_file() -> Path:
    return paths.data_dir() / "policy" / "fingerprints.json"


def _parse(fingerprint: str) -> tuple[str, str, str]:
    name, _, rest = fingerprint.partition("|")
    risk, _, template = rest.partition("|")
    return name, risk, template


def check_upgrades(tools: Iterable[ToolSpec]) -> list[str]:
    """Compare with the stored fingerprints, drop affected grants, store the new ones."""
    try:
        old: dict[str, dict[str, str]] = json.loads(fingerprint_file().read_text("utf-8"))
    except (FileNotFoundError, ValueError):
        old = {}
    new: dict[str, dict[str, str]] = {}
    for spec in tools:
        new.setdefault(spec.plugin, {})[spec.name] = spec.fingerprint()
    notices: list[str] = []
    changed: set[str] = set()
    for plugin, declared in sorted(new.items()):
        before = old.get(plugin)
        if before is None:
            continue
        for name, fp in sorted(declared.items()):
            _, risk, template = _parse(fp)
            if name not in before:
                notices.append(f"plugin {plugin!r} added tool {name!r} (risk {risk})")
                changed.add(name)
                continue
            _, old_risk, old_template = _parse(before[name])
            if RISK_RANK.get(risk, 4) > RISK_RANK.get(old_risk, 4):
                notices.append(
                    f"plugin {plugin!r} raised the risk of tool {name!r} from {old_risk} to {risk}"
                )
                changed.add(name)
            elif template != old_template:
                notices.append(
                    f"plugin {plugin!r} changed the permission key of tool {name!r} "
                    f"from {old_template!r} to {template!r}"
                )
                changed.add(name)
    if changed:
        dropped = remove_grants(tools=changed)
        if dropped:
            notices.append(f"{dropped} saved approval(s) for these tools will be asked again")
    if new != old:
        merged = {**old, **new}
        try:
            text = json.dumps(merged, indent=2, sort_keys=True) + "\n"
            paths.write_private(fingerprint_file(), text)
        except OSError:  # a read-only home (said once): the next start compares again
            pass
    return notices
