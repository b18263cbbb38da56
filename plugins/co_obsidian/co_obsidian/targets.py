"""What a co-obsidian call will really touch, for its permission key (``resolve=``).

A note may be named by its path in any case or normal form, with or without ``.md``, by
``..`` inside the vault, by its title, a ``[[link]]`` or an alias: the key names it once,
as ``obsidian:read:<vault-relative path>`` (NFC), and the tool then opens exactly that
path. A name that is refused (outside the vault, ambiguous) is refused before anything
is decided or read.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Hashable, Mapping
from typing import Any

from co_core import CallRefused, CoDeps, Resolved
from co_obsidian.keys import VAULT


def note_key(verb: str, path: str) -> str:
    """``obsidian:<verb>:<path>``, the path in NFC (macOS writes names in NFD)."""
    return f"obsidian:{verb}:{unicodedata.normalize('NFC', path)}"


def _note(
    args: Mapping[str, Any], deps: CoDeps, verb: str, *, create: bool, part: bool = False
) -> Resolved:
    from co_obsidian.links import resolve, resolve_part
    from co_obsidian.vault import VaultError

    name = args.get("name")
    if not isinstance(name, str):
        raise CallRefused("name must be text: a note path (folder/Note.md) or title")
    subpath = ""
    try:
        index = deps.resource(VAULT).index()
        if part:
            found, subpath = resolve_part(index, name)
        else:
            found = resolve(index, name, for_create=create)
    except VaultError as exc:
        raise CallRefused(str(exc)) from exc
    if found.path is None:
        raise CallRefused(found.problem or f"{name!r} is not a note name")
    if not create and not found.exists:
        raise CallRefused(f"No note named {name!r}. Use search_notes or list_notes to find it.")
    # the note as its path (and the part of it asked for): exactly what the tool opens
    named = f"{found.path}#{subpath}" if subpath else found.path
    return Resolved({**args, "name": named}, (note_key(verb, found.path),))


def reading(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    return _note(args, deps, "read", create=False, part=True)


def appending(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    return _note(args, deps, "write", create=False)


def creating(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    return _note(args, deps, "write", create=True)


class Readable:
    """The filter a search, a listing or backlinks apply: notes the user's rules keep
    from being read are left out, so their text never reaches the model by another
    road. ``version`` changes when the rules do: answers are kept for one version (None,
    where Co cannot say when its rules change: nothing is kept)."""

    def __init__(self, deps: CoDeps) -> None:
        self.deps = deps

    @property
    def version(self) -> Hashable:
        current = self.deps.policy_version
        return None if current is None else (self.deps.policy, current())

    def __call__(self, path: str) -> bool:
        return self.deps.allows(note_key("read", path))


def readable(deps: CoDeps) -> Readable:
    return Readable(deps)
