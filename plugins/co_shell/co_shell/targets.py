"""What a co-shell call will really touch, for its permission key (``resolve=`` of a tool).

``./secrets/x``, ``/workspace/secrets/x``, ``src/../secrets/x`` and a symlink into
``secrets/`` are one file: the key names it once, as its workspace-relative path with
every symlink followed, and the tool then works on exactly that path. Python code is
named by a hash of what will run (the snippet, or the script's content), so a "yes"
covers exactly the code that was shown. A shell command is spelled as Co runs it: every
word quoted by Co (``canonical_shell_command``), so the key, the decision and the text
bash reads are one string.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from co_core import CallRefused, CoDeps, Resolved, canonical_shell_command
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
    """A path to read or list: ``fs:read:<canonical path>``. One that does not exist is
    refused before anything is decided, unless the rules keep it from reading (then the
    decision says so, and nobody learns whether it exists)."""
    path = _canonical(deps, args.get("path", "."), write=False)
    if not os.path.lexists(Path(deps.workspace) / path) and deps.allows(f"fs:read:{path}"):
        raise CallRefused(f"no file {path!r} in the workspace; list_files shows what exists")
    return Resolved({**args, "path": path})


# /docs


def writing(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    """A path to write: ``fs:write:<canonical path>`` (never .git/ or .co/)."""
    return Resolved({**args, "path": _canonical(deps, args.get("path", ""), write=True)})


def setting(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    """A setting to change: ``fs:write:<canonical path>``, refused when no line of the file
    sets the key (or several do): what would change is known before it is decided."""
    from co_shell.config_values import NotSet, find

    resolved = writing(args, deps)
    key = args.get("key")
    if not isinstance(key, str) or not key.strip():
        raise CallRefused("key must be the name of a setting, e.g. 'port'")
    shown = str(resolved.args["path"])
    if not deps.allows(f"fs:read:{shown}"):
        return resolved  # a file kept from reading is not read to check it
    try:
        data = pathsafe.read_bytes(deps.workspace, pathsafe.resolve(deps.workspace, shown))
        find(data.decode("utf-8"), key)
    except (OSError, UnicodeDecodeError, pathsafe.PathRefused):
        return resolved  # the tool says what is wrong with the file
    except NotSet as exc:
        raise CallRefused(f"{shown}: {exc}; read_file it to see its settings") from exc
    return resolved


def shell(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    """A shell command: ``shell:exec:<the command as Co runs it>``. A command whose
    meaning is fixed is re-spelled (``ls  "-la"`` runs as ``ls -la``); any other is kept
    as written, and asked about."""
    cmd = args.get("cmd")
    if not isinstance(cmd, str):
        return Resolved(dict(args))  # the tool says what is missing
    return Resolved({**args, "cmd": canonical_shell_command(cmd)})


def _digest(data: bytes, argv: Any = None) -> str:
    """The hash in a python key: of the code, and of its arguments when there are any (they
    change what the code does as much as the code does)."""
    if argv:
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise CallRefused("args must be a list of strings, e.g. ['--dry-run']")
        data += b"\0" + b"\0".join(a.encode("utf-8", "surrogatepass") for a in argv)
    return "sha256=" + hashlib.sha256(data).hexdigest()[:16]


def _head(code: str) -> str:
    first = " ".join(code.split())
    return first if len(first) <= HEAD_CHARS else first[: HEAD_CHARS - 1] + "…"


def python(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    """``python:run:sha256=<hash> <head of the code>`` for a snippet, or
    ``python:run:<script path> sha256=<hash of its content>`` for a script; the hash also
    covers the arguments, when there are any.

    For a script the content that was hashed becomes the ``code`` the tool runs (see
    ``python_run``): the file is read once, here, and what runs is what was decided on.
    """
    code, path = args.get("code"), args.get("path")
    if path is None:
        if not isinstance(code, str):
            return Resolved(dict(args), ("python:run:",))  # the tool says what is missing
        digest = _digest(code.encode("utf-8", "surrogatepass"), args.get("args"))
        return Resolved(dict(args), (f"python:run:{digest} {_head(code)}",))
    if code is not None:
        raise CallRefused("give either code (a snippet) or path (a .py file), not both")
    rel = _canonical(deps, path, write=False)
    try:
        real = pathsafe.resolve(deps.workspace, rel)
    except pathsafe.PathRefused as exc:  # it changed since (a folder swapped for a symlink)
        raise CallRefused(str(exc)) from exc
    if not os.path.isfile(real):  # the tool says there is no such file
        return Resolved(
            {**args, "path": rel}, (f"python:run:{rel} {_digest(b'', args.get('args'))}",)
        )
    try:
        content = pathsafe.read_bytes(deps.workspace, real)
    except (OSError, pathsafe.PathRefused) as exc:
        raise CallRefused(f"cannot read {rel!r}: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise CallRefused(
            f"{rel!r} is not UTF-8 text; run_python runs UTF-8 scripts (convert it first)"
        ) from None
    return Resolved(
        {**args, "path": rel, "code": text},
        (f"python:run:{rel} {_digest(content, args.get('args'))}",),
    )
