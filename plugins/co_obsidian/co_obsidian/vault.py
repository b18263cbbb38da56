"""The vault on disk: where it is, which files are notes, and which paths are safe.

Notes are ``.md`` files. Hidden folders (``.obsidian/``, ``.trash/``, ``.git/``) and
everything that is not markdown (attachments: images, PDFs) are ignored. Every path a
tool is given is resolved with symlinks followed and refused unless it stays inside the
vault; symlinked notes are indexed only when they point inside the vault.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from co_core import CoError

SETTING_HINT = "co config set obsidian.vault_path PATH (or env OBSIDIAN_VAULT_PATH)"
NOTE_SUFFIX = ".md"
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


def is_ignored(rel: str) -> bool:
    parts = rel.split("/")
    return any(p.startswith(".") for p in parts) or not rel.endswith(NOTE_SUFFIX)


def walk(
    root: Path, dirs: dict[str, int] | None = None, links: list[str] | None = None
) -> Iterator[FileStat]:
    """Every note in the vault with its mtime and size (symlinks checked). ``dirs``, if
    given, receives each visited folder's mtime (creates, renames, deletes change it);
    ``links`` the notes that are symlinks (a search with rg names them explicitly)."""
    stack = [(str(root), "")]
    root_str = str(root)
    while stack:
        path, rel_dir = stack.pop()
        try:
            if dirs is not None:
                dirs[rel_dir] = os.stat(path).st_mtime_ns
            entries = os.scandir(path)
        except OSError:
            continue
        with entries:
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                rel = f"{rel_dir}/{name}" if rel_dir else name
                try:
                    if entry.is_symlink():
                        target = os.path.realpath(entry.path)
                        if not (target + os.sep).startswith(root_str + os.sep):
                            continue  # points outside the vault
                        if os.path.isdir(target):
                            continue  # no symlinked folders: no loops, no double counting
                        if links is not None and name.endswith(NOTE_SUFFIX):
                            links.append(rel)
                    elif entry.is_dir():
                        stack.append((entry.path, rel))
                        continue
                    if not name.endswith(NOTE_SUFFIX):
                        continue
                    st = entry.stat()
                except OSError:
                    continue
                yield FileStat(rel, st.st_mtime_ns, st.st_size)


def walk_names(root: Path, links: list[str] | None = None, limit: int | None = None) -> list[str]:
    """The notes :func:`walk` lists, by name only: a search without the index lets rg read
    the files, and a stat per note is most of a walk's cost. Same rules: hidden names
    skipped, ``.md`` only, symlinks only to existing files inside the vault (``links``
    receives those). With ``limit``, the first notes found (about that many)."""
    names: list[str] = []
    stack = [(str(root), "")]
    inside = str(root) + os.sep
    while stack and (limit is None or len(names) < limit):
        path, rel_dir = stack.pop()
        try:
            entries = os.scandir(path)
        except OSError:
            continue
        prefix = f"{rel_dir}/" if rel_dir else ""
        with entries:
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                try:
                    if entry.is_symlink():
                        target = os.path.realpath(entry.path)
                        if not name.endswith(NOTE_SUFFIX) or not target.startswith(inside):
                            continue
                        if not os.path.exists(target) or os.path.isdir(target):
                            continue
                        if links is not None:
                            links.append(prefix + name)
                    elif entry.is_dir():
                        stack.append((entry.path, prefix + name))
                        continue
                    elif not name.endswith(NOTE_SUFFIX):
                        continue
                except OSError:
                    continue
                names.append(prefix + name)
    return names


def stat_note(root: Path, rel: str) -> FileStat | None:
    """One note's FileStat by the same rules as :func:`walk`, or None if it is not a note
    (gone, hidden, not markdown, a folder, or a symlink leading out of the vault)."""
    if is_ignored(rel):
        return None
    path = os.path.join(root, rel)
    try:
        if os.path.islink(path):
            target = os.path.realpath(path)
            if not (target + os.sep).startswith(str(root) + os.sep):
                return None
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return FileStat(rel, st.st_mtime_ns, st.st_size)


def resolve_inside(root: Path, name: str) -> Path:
    """``root/name`` with symlinks followed; OutsideVault if it leaves the vault."""
    candidate = Path(name)
    if candidate.is_absolute():
        target = candidate.resolve()
    else:
        target = (root / candidate).resolve()
    if target != root and not target.is_relative_to(root):
        raise OutsideVault(f"Access denied: {name!r} is outside the vault.")
    return target


def relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def read_bytes(path: str, size_hint: int, limit: int) -> bytes | None:
    """A note's bytes (at most ``limit``), or None if it is gone or looks binary. Plain
    ``os`` calls: a search without an index reads thousands of notes through here."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        want = min(limit, size_hint + 1)
        data = os.read(fd, want)
        if len(data) == want and want < limit:  # grew since it was listed
            data += os.read(fd, limit - want)
    except OSError:
        return None
    finally:
        os.close(fd)
    if data.find(b"\0", 0, BINARY_SNIFF) != -1:
        return None
    return data


def read_text(path: Path, limit: int | None = None) -> str | None:
    """A note's text (bad UTF-8 replaced), or None if it looks binary or cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read() if limit is None else handle.read(limit)
    except OSError:
        return None
    if b"\0" in data[:BINARY_SNIFF]:
        return None
    return data.decode("utf-8", errors="replace")
