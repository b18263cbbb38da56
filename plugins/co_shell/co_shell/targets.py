"""What a co-shell call will really touch, for its permission key (``resolve=`` of a tool).

``./secrets/x``, ``/workspace/secrets/x``, ``src/../secrets/x`` and a symlink into
``secrets/`` are one file: the key names it once, as its workspace-relative path with
every symlink followed, and the tool then works on exactly that path. Python code is
named by a hash of what will run (the snippet, or the script's content), so a "yes"
covers exactly the code that was shown.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

from co_core import CallRefused, CoDeps, Resolved
from co_shell import pathsafe

HEAD_CHARS = 48  # of the code, in the key, so a person can tell snippets apart


def _canonical(deps: CoDeps, path: Any, *, write: bool) -> str:
    if not isinstance(path, str):
        raise CallRefused("path must be text, e.g. 'src/main.py'")
    try:
        real = pathsafe.resolve(deps.workspace, path, write=write)
    except pathsafe.PathRefused as exc:
        raise CallRefused(str(exc)) from exc
    return pathsafe.relative(deps.workspace, real)


# docs: resolver
def reading(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    """A path to read or list: ``fs:read:<canonical path>``."""
    return Resolved({**args, "path": _canonical(deps, args.get("path", "."), write=False)})


# /docs


def writing(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    """A path to write: ``fs:write:<canonical path>`` (never .git/ or .co/)."""
    return Resolved({**args, "path": _canonical(deps, args.get("path", ""), write=True)})


def _digest(data: bytes) -> str:
    return "sha256=" + hashlib.sha256(data).hexdigest()[:16]


def _head(code: str) -> str:
    first = " ".join(code.split())
    return first if len(first) <= HEAD_CHARS else first[: HEAD_CHARS - 1] + "…"


def python(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    """``python:run:sha256=<hash> <head of the code>`` for a snippet, or
    ``python:run:<script path> sha256=<hash of its content>`` for a script."""
    code, path = args.get("code"), args.get("path")
    if path is None:
        if not isinstance(code, str):
            return Resolved(dict(args), ("python:run:",))  # the tool says what is missing
        return Resolved(dict(args), (f"python:run:{_digest(code.encode())} {_head(code)}",))
    rel = _canonical(deps, path, write=False)
    real = pathsafe.resolve(deps.workspace, rel)
    try:
        content = pathsafe.read_bytes(deps.workspace, real) if os.path.isfile(real) else b""
    except (OSError, pathsafe.PathRefused) as exc:
        raise CallRefused(f"cannot read {rel!r}: {getattr(exc, 'strerror', None) or exc}") from exc
    return Resolved({**args, "path": rel}, (f"python:run:{rel} {_digest(content)}",))
