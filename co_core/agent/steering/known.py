"""The names a forced call may copy, as the tool itself reads them.

A tool that touches a named thing declares a resolver (``register(..., resolve=...)``):
the note, file or channel a name really means, refused when there is none ("No note
named 'température de four'"). Before Co makes a small model call such a tool, it asks
the resolver about every short run of the user's words for each name the call takes;
when some runs name a real thing and others do not, the call may copy only the former
("Lis ma note Recipes/Pancakes : quelle température…" reads Recipes/Pancakes). Nothing
the resolver would accept is taken away, so the narrowing never costs a good call.

Resolvers are plugins' code: one that fails in any other way, or that takes longer than
``BUDGET`` seconds for all the runs, leaves the call as it was.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

from pydantic_ai.tools import ToolDefinition

from co_core.agent.local.copying import PAYLOAD_KEYS, short_runs
from co_core.agent.local.grammar import PATH_KEYS
from co_core.agent.tools.bm25 import FILE_NAME
from co_core.kernel.deps import CoDeps
from co_core.kernel.tools import CallRefused, ToolSpec

BUDGET = 0.25  # seconds of resolving per forced call


def _string(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    if schema.get("type") == "string":
        return "enum" not in schema
    options = schema.get("anyOf")
    return isinstance(options, list) and any(_string(o) for o in options)


def narrowed(
    tool: ToolDefinition, spec: ToolSpec | None, words: str, deps: CoDeps
) -> ToolDefinition:
    """``tool`` with each name it takes limited to the runs of ``words`` its resolver
    accepts (unchanged when it has no resolver, accepts all or none, or fails)."""
    if spec is None or spec.resolve is None:
        return tool
    schema = tool.parameters_json_schema or {}
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return tool
    runs = short_runs(words)
    deadline = time.monotonic() + BUDGET
    limited: dict[str, Any] = {}
    files = list(dict.fromkeys(FILE_NAME.findall(words)))
    # the file a call works on, when the words name one: a key is looked for in it
    given = {k: files[0] for k in props if k.lower() in PATH_KEYS} if len(files) == 1 else {}
    for key, prop in props.items():
        if key in PAYLOAD_KEYS or key in given or not _string(prop):
            continue
        accepted = []
        for run in runs:
            try:
                spec.make_call({**given, key: run}, deps)
            except CallRefused:
                continue
            except Exception:  # noqa: BLE001 - a plugin's resolver: not ours to judge
                return tool
            if time.monotonic() > deadline:
                return tool
            accepted.append(run)
        if accepted and len(accepted) < len(runs):
            described = {k: v for k, v in prop.items() if k in ("title", "description")}
            limited[key] = {**described, "type": "string", "enum": accepted}
    if not limited:
        return tool
    schema = {**schema, "properties": {**props, **limited}}
    return dataclasses.replace(tool, parameters_json_schema=schema)
