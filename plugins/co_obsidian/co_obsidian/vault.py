"""The vault on disk: where it is, which files are notes, and which paths are safe.

Notes are ``.md`` files (any case: ``.MD`` and ``.Md`` too). Hidden files and folders
(``.obsidian/``, ``.trash/``, ``.git/``) are not part of the vault; other files are
attachments (images, PDFs, canvases), which links may point to. Every path a tool is
given is resolved with symlinks followed and refused unless it stays inside the vault;
symlinked notes count only when they point inside the vault, symlinked folders are not
walked.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from co_core import CoError

SETTING_HINT = "co config set obsidian.vault_path PATH (or env OBSIDIAN_VAULT_PATH)"
BINARY_SNIFF = 8192


class VaultError(CoError):
    """The vault is not configured, missing, or a path is not allowed; the message says why."""


class OutsideVault(VaultError):
    """A path that resolves outside the vault."""


def vault_root(settings: Any) -> Path:
    """The configured vault folder, resolved; VaultError naming the setting otherwise."""
    raw = settings.section("obsidian").vault_path
    if not raw:
        raise VaultError(f"No Obsidian vault is configured. Set one: {SETTING_HINT}")
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise VaultError(
            f"Obsidian vault {path} does not exist or is not a folder. Fix: {SETTING_HINT}"
        )
    return path.resolve()


class FileStat(NamedTuple):
    rel: str  # vault-relative posix path
    mtime_ns: int
    size: int
    link: bool = False  # a symlink (to a note inside the vault)


NOTE_SUFFIXES = (".md", ".MD", ".Md", ".mD")


def is_note_name(name: str) -> bool:
    return name.endswith(NOTE_SUFFIXES)


def is_hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


def is_ignored(rel: str) -> bool:
    """Not a note: hidden, or not markdown."""
    return is_hidden(rel) or not is_note_name(rel)


def stem(rel: str) -> str:
    """A note's file name without ``.md``: the part of its path that a search matches."""
    return rel[:-3].rpartition("/")[2]


def walk(
    root: Path,
    *,
    sizes: bool = True,
    dirs: dict[str, int] | None = None,
    links: list[str] | None = None,
    attachments: list[str] | None = None,
) -> Iterator[FileStat]:
    """Every note in the vault, with its mtime and size (``sizes=False``: -1 for both,
    and no ``stat`` per note, which is most of a walk's cost). ``dirs`` receives each
    visited folder's mtime (creates, renames, deletes change it), ``links`` the notes
    that are symlinks, ``attachments`` the other files."""
    stack = [(str(root), "")]
    inside = str(root) + os.sep
    while stack:
        path, rel_dir = stack.pop()
        try:
            if dirs is not None:
                dirs[rel_dir] = os.stat(path).st_mtime_ns
            entries = os.scandir(path)
        except OSError:
            continue
        prefix = f"{rel_dir}/" if rel_dir else ""
        with entries:
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                rel = prefix + name
                note = name.endswith(NOTE_SUFFIXES)
                try:
                    link = entry.is_symlink()
                    if link:
                        target = os.path.realpath(entry.path)
                        if not target.startswith(inside) or not os.path.exists(target):
                            continue  # points outside the vault, or nowhere
                        if os.path.isdir(target):
                            continue  # no symlinked folders: no loops, no double counting
                        if note and links is not None:
                            links.append(rel)
                    elif entry.is_dir():
                        stack.append((entry.path, rel))
                        continue
                    if not note:
                        if attachments is not None:
                            attachments.append(rel)
                        continue
                    if not sizes:
                        yield FileStat(rel, -1, -1, link)
                        continue
                    st = entry.stat()
                except OSError:
                    continue
                yield FileStat(rel, st.st_mtime_ns, st.st_size, link)


def stat_note(root: Path, rel: str) -> FileStat | None:
    """One note's FileStat by the same rules as :func:`walk`, or None if it is not a note
    (gone, hidden, not markdown, a folder, or a symlink leading out of the vault)."""
    if is_ignored(rel):
        return None
    path = os.path.join(root, rel)
    try:
        link = os.path.islink(path)
        if link:
            target = os.path.realpath(path)
            if not target.startswith(str(root) + os.sep):
                return None
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return FileStat(rel, st.st_mtime_ns, st.st_size, link)


def resolve_inside(root: Path, name: str) -> Path:
    """``root/name`` with symlinks followed; OutsideVault if it leaves the vault."""
    candidate = Path(name)
    target = candidate.resolve() if candidate.is_absolute() else (root / candidate).resolve()
    if target != root and not target.is_relative_to(root):
        raise OutsideVault(f"Access denied: {name!r} is outside the vault.")
    return target


def relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def read_text(path: Path | str, limit: int | None = None) -> str | None:
    """A note's text (bad UTF-8 replaced), or None if it looks binary or cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read() if limit is None else handle.read(limit)
    except OSError:
        return None
    if b"\0" in data[:BINARY_SNIFF]:
        return None
    return data.decode("utf-8", errors="replace")
