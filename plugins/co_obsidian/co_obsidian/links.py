"""Which file a name leads to: Obsidian's link resolution, and the names the model types.

Obsidian resolves a link ``[[path]]`` written in the note ``source`` like this (its
``getLinkpathDest``); names are compared in any case and in NFC, accents count:

1. ``[[]]`` / ``[[#Heading]]``: the note itself.
2. The files whose *file name* is the link's last part: as written when it has an
   extension (``image.png``, ``Note.md``) and such a file exists, else with ``.md``.
   None: unresolved. Exactly one, and the link is a bare name: that file.
3. ``./x`` and ``../x`` are relative to the source's folder; a file at exactly that
   path wins. Then a file at exactly the path (from the vault root; a leading ``/``
   is the root) wins. A link starting with ``/`` matches nothing else.
4. Otherwise the files whose path ends with the link (``[[b/Note]]`` matches
   ``a/b/Note.md``): those whose path starts with the source's folder first, each
   group shortest path first. Obsidian breaks a tie by the order it loaded the files;
   Co by the path's alphabetical order.

Aliases play no part in links (Obsidian only offers them while you type a link).
"""

from __future__ import annotations

import os
import posixpath
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from co_obsidian import text as T
from co_obsidian.parse import wikilink
from co_obsidian.vault import is_hidden, is_note_name


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def _js_length(path: str) -> int:
    """A path's length as JavaScript counts it (UTF-16 code units), for Obsidian's order."""
    return len(path.encode("utf-16-le")) // 2


def ranked(linkpath: str, source: str, named: Callable[[str], list[str]]) -> list[list[str]]:
    """The files ``[[linkpath]]`` in ``source`` may mean, best first, in groups of equal
    rank. ``named(key)``: vault paths of the files whose NFC-lower-cased file name is
    ``key``. See the module docstring for the rules."""
    if linkpath == "":
        return [[source]] if source else []
    n = T.name_key(linkpath)
    name = n.rpartition("/")[2]
    found = named(name) if "." in name else []
    if not found:
        n = T.name_key(linkpath + ".md")
        name = n.rpartition("/")[2]
        found = named(name)
    if not found:
        return []
    if name == n and len(found) == 1:
        return [found]
    keys = {path: T.name_key(path) for path in found}
    folder = T.name_key(_parent(source))
    if n.startswith(("./", "../")):
        if n.startswith("./../"):
            n = n[2:]
        if n.startswith("./"):
            n = (folder + "/" if folder else "") + n[2:]
            folder = folder + "/" if folder else folder
        else:
            while n.startswith("../"):
                n = n[3:]
                folder = _parent(folder)
            folder = folder + "/" if folder else folder
            n = folder + n
        exact = [path for path in found if keys[path] == n]
        if exact:
            return [exact[:1]]
    n = n.removeprefix("/")
    exact = [path for path in found if keys[path] == n]
    if exact:
        return [exact[:1]]
    if linkpath.startswith("/"):
        return []
    near = [p for p in found if keys[p].endswith(n) and keys[p].startswith(folder)]
    far = [p for p in found if keys[p].endswith(n) and not keys[p].startswith(folder)]
    groups: list[list[str]] = []
    for part in (near, far):
        lengths: dict[int, list[str]] = {}
        for path in sorted(part):
            lengths.setdefault(_js_length(path), []).append(path)
        groups += [lengths[length] for length in sorted(lengths)]
    return groups


def resolve_link(linkpath: str, source: str, named: Callable[[str], list[str]]) -> str | None:
    """The file ``[[linkpath]]`` in the note ``source`` leads to, or None (unresolved)."""
    groups = ranked(linkpath, source, named)
    return groups[0][0] if groups else None


class Names(Protocol):
    """What resolving a typed name needs from the vault's index."""

    root: Path

    def named(self, key: str) -> list[str]:
        """Vault paths of the files (notes and attachments) with this NFC-lower file name."""
        ...

    def aliased(self, key: str) -> list[str]:
        """Vault paths of the notes with this alias (NFC, lower case)."""
        ...


@dataclass
class Resolved:
    """A name the model typed, resolved. ``path`` is the canonical vault-relative path
    of the note (symlinks followed, the case and spelling on disk) or of the note a
    write would create; None when the name is refused, and ``problem`` says why."""

    path: str | None
    exists: bool = False
    problem: str | None = None
    choices: list[str] = field(default_factory=list)


def _entry(folder: Path, part: str) -> str | None:
    """The entry of ``folder`` named ``part``, in any case and normal form: as on disk."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return None
    if part in entries:
        return part
    key = T.name_key(part)
    matches = sorted(e for e in entries if T.name_key(e) == key)
    return matches[0] if matches else None


def on_disk(root: Path, rel: str, *, prefix_only: bool = False) -> str | None:
    """``rel`` with each part spelled as on disk (any case, NFC or NFD). With
    ``prefix_only``, the parts that exist as on disk and the rest as given."""
    parts = rel.split("/")
    out: list[str] = []
    folder = root
    for index, part in enumerate(parts):
        found = _entry(folder, part)
        if found is None:
            return "/".join(out + parts[index:]) if prefix_only else None
        out.append(found)
        folder = folder / found
    return "/".join(out)


def _canonical(root: Path, rel: str) -> str | None:
    """The real vault-relative path of ``root/rel`` (symlinks followed; the parts that
    do not exist yet as given), or None when it leads outside the vault."""
    target = (root / rel).resolve()
    if target == root or not target.is_relative_to(root):
        return None
    return target.relative_to(root).as_posix()


def _outside(typed: str) -> Resolved:
    return Resolved(None, problem=f"Access denied: {typed!r} is outside the vault.")


def _not_a_note(typed: str) -> Resolved:
    return Resolved(
        None, problem=f"{typed!r} is not a note: only .md files outside hidden folders are notes"
    )


def _found(names: Names, typed: str, rel: str) -> Resolved:
    canonical = _canonical(names.root, rel)
    if canonical is None:
        return _outside(typed)
    if is_hidden(canonical) or not is_note_name(canonical) or (names.root / canonical).is_dir():
        return _not_a_note(typed)
    return Resolved(canonical, exists=True)


def _to_create(names: Names, typed: str, rel: str) -> Resolved:
    if not is_note_name(rel):
        rel += ".md"
    canonical = _canonical(names.root, on_disk(names.root, rel, prefix_only=True) or rel)
    if canonical is None:
        return _outside(typed)
    if is_hidden(canonical):
        return Resolved(
            None, problem=f"{typed!r}: notes cannot go in hidden folders like .obsidian/"
        )
    return Resolved(canonical, exists=(names.root / canonical).is_file())


def clean_name(typed: str) -> str:
    """What names the note in ``typed``: ``[[Note#Heading|alias]]`` -> ``Note``."""
    name = T.nfc(typed.strip())
    if name.startswith("![["):
        name = name[1:]
    if name.startswith("[[") and name.endswith("]]"):
        name = wikilink(name[2:-2]).path
    return name.strip()


def control_character(text: str) -> str | None:
    """The first control character (NUL, a line break, …) in ``text``, as ``U+0000``."""
    for char in text:
        if unicodedata.category(char) == "Cc":
            return f"U+{ord(char):04X}"
    return None


def _subpath(typed: str) -> str:
    """The heading or block after ``#`` in ``[[Note#^block|shown]]`` or ``Note#Heading``."""
    name = T.nfc(typed.strip()).removeprefix("!")
    if name.startswith("[[") and name.endswith("]]"):
        name = name[2:-2].replace("\\|", "|").split("|", 1)[0]
    return name.partition("#")[2].strip()


def resolve_part(names: Names, typed: str, *, from_note: str | None = None) -> tuple[Resolved, str]:
    """Like :func:`resolve` for a name that may end with ``#Heading``, ``#H1#H2`` or
    ``#^block``: (the note, that subpath or ""). A note whose file name holds ``#``
    (Obsidian cannot make one, other programs can) is found by its whole name first."""
    name = clean_name(typed)
    if "#" not in name:
        return resolve(names, typed, from_note=from_note), _subpath(typed)
    cuts = [i for i, char in enumerate(name) if char == "#"]
    for cut in [len(name), *reversed(cuts)]:
        found = resolve(names, name[:cut], from_note=from_note)
        if found.exists:
            return found, name[cut + 1 :].strip()
    return resolve(names, name[: cuts[0]], from_note=from_note), name[cuts[0] + 1 :].strip()


def resolve(
    names: Names, typed: str, *, from_note: str | None = None, for_create: bool = False
) -> Resolved:
    """Resolve what the model typed for a note: a path (with or without ``.md``, any
    case, NFC or NFD, ``..`` allowed while it stays inside), a title or ``[[link]]`` as
    Obsidian resolves links from ``from_note`` (from the vault root without it), or an
    alias. Without such a note, the path a write would create. ``for_create``: only a
    path (``create_note("Plan")`` makes ``Plan.md`` even when ``projects/Plan.md`` exists)."""
    name = clean_name(typed)
    if not name:
        return Resolved(
            None, problem="name is empty: give a note path (folder/Note.md) or a note title"
        )
    bad = control_character(typed)
    if bad is not None:
        return Resolved(
            None, problem=f"{typed!r} holds a control character ({bad}): note names cannot"
        )
    root = names.root
    if os.path.isabs(name):
        target = Path(name).resolve()
        if not target.is_relative_to(root) or target == root:
            return _outside(typed)
        name = target.relative_to(root).as_posix()
    if from_note and name.startswith(("./", "../")):
        name = posixpath.join(posixpath.dirname(from_note), name)
    rel = posixpath.normpath(name)
    if rel == "." or rel == ".." or rel.startswith("../"):
        return _outside(typed)
    if is_hidden(rel):
        return _not_a_note(typed)
    spelled = on_disk(root, rel if is_note_name(rel) else rel + ".md")
    if spelled is not None:
        return _found(names, typed, spelled)
    if for_create:
        return _to_create(names, typed, rel)
    notes = [
        [p for p in group if is_note_name(p)]
        for group in ranked(name, from_note or "", names.named)
    ]
    notes = [group for group in notes if group]
    if not notes:
        notes = [group for group in [names.aliased(T.name_key(name))] if group]
    if notes:
        if len(notes[0]) > 1:
            listing = ", ".join(notes[0][:10])
            return Resolved(
                None,
                problem=f"{typed!r} could mean several notes: {listing}. Use the full path.",
                choices=notes[0],
            )
        return _found(names, typed, notes[0][0])
    return _to_create(names, typed, rel)


def resolve_note(
    names: Names, typed: str, *, from_note: str | None = None, for_create: bool = False
) -> str | None:
    """The canonical vault-relative path of the note ``typed`` names (see :func:`resolve`),
    or of the note a write would create there; None when it names nothing a tool would
    touch: outside the vault, hidden, empty, or several notes at once. The path is
    spelled as on disk (a permission key should compare it in NFC)."""
    return resolve(names, typed, from_note=from_note, for_create=for_create).path
