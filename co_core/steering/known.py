"""The names a forced call may copy, as the tool itself reads them.

A tool that touches a named thing declares a resolver (``register(..., resolve=...)``):
the note, file or channel a name really means, refused when there is none ("No note
named 'température de four'"). Before Co makes a small model call such a tool, it asks
the resolver about every short run of the user's words for each ``target`` the call
takes (the arguments the resolver reads, as the tool declares them);
when some runs name a real thing and others do not, the call may copy only the former
("Lis ma note Recipes/Pancakes : quelle température…" reads Recipes/Pancakes). Nothing
the resolver would accept is taken away, so the narrowing never costs a good call.

Resolvers are plugins' code: one that fails in any other way, or that takes longer than
``BUDGET`` seconds for all the runs, leaves the call as it was.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from co_core.kernel.deps import CoDeps
from co_core.kernel.tools import CallRefused, Role, ToolSpec
from co_core.steering.runs import Source, file_names, short_runs
from co_core.steering.values import plain

BUDGET = 0.25  # seconds of resolving per forced call


def narrowed(
    schema: Mapping[str, Any],
    spec: ToolSpec | None,
    roles: Mapping[str, Role],
    words: str,
    deps: CoDeps,
) -> Mapping[str, Any]:
    """``schema`` (a tool's parameters) with each target it takes limited to the runs of
    ``words`` its resolver accepts (unchanged when it has no resolver, accepts all or
    none, or fails; an optional target none of whose runs it accepts is left out: the
    words name nothing it could be). When the words name one file, the first target is
    that file, and the others are looked for in it (a setting's key in the file named)."""
    if spec is None or spec.resolve is None:
        return schema
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return schema
    targets = [k for k, v in props.items() if roles.get(k) == "target" and _string(plain(v))]
    files = file_names(Source.of(words))
    given = {targets[0]: files[0]} if targets and len(files) == 1 else {}
    runs = short_runs(words)
    deadline = time.monotonic() + BUDGET
    limited: dict[str, Any] = {}
    dropped: set[str] = set()
    required = set(schema.get("required") or ())
    for key in targets:
        if key in given:
            continue
        accepted = []
        for run in runs:
            try:
                spec.make_call({**given, key: run}, deps)
            except CallRefused:
                continue
            except Exception:  # noqa: BLE001 - a plugin's resolver: not ours to judge
                return schema
            if time.monotonic() > deadline:
                return schema
            accepted.append(run)
        if accepted and len(accepted) < len(runs):
            described = {k: v for k, v in props[key].items() if k in ("title", "description")}
            limited[key] = {**described, "type": "string", "enum": accepted}
        elif runs and not accepted and key not in required:  # it names nothing here
            dropped.add(key)
    if not limited and not dropped:
        return schema
    kept = {k: v for k, v in {**props, **limited}.items() if k not in dropped}
    return {**schema, "properties": kept}


def _string(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("type") == "string" and "enum" not in schema
