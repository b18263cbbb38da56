"""Which project folders the user trusts to configure Co (``co trust``).

A project's ``.co/`` folder can change settings, rules and MCP servers, so a cloned
repository must not get that power by itself: only folders listed here count.
"""

from __future__ import annotations

import functools
import json
import os
import stat
from pathlib import Path

from co_core.kernel.paths import config_dir, write_private


def trust_file() -> Path:
    """Where the trusted folders are listed."""
    return config_dir() / "trusted.json"


def trusted_folders() -> list[Path]:
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return []
    return [Path(p) for p in data.get("folders", []) if isinstance(p, str)]


def _save(folders: list[Path]) -> None:
    unique = sorted({str(f) for f in folders})
    write_private(trust_file(), json.dumps({"folders": unique}, indent=2) + "\n")


def trust(folder: Path) -> Path:
    folder = folder.resolve()
    _save([*trusted_folders(), folder])
    return folder


def untrust(folder: Path) -> bool:
    folder = folder.resolve()
    folders = trusted_folders()
    if folder not in folders:
        return False
    _save([f for f in folders if f != folder])
    return True


def project_root(start: Path | None = None) -> Path | None:
    """The project folder a session started at ``start`` belongs to.

    The nearest *trusted* folder at or above ``start`` (with or without a ``.co``
    directory); when none is trusted, the nearest folder holding a ``.co`` directory that
    is the user's own (see :func:`own_folder`; its files are then ignored, with a notice);
    else None. So a ``.co/`` planted in a subfolder of a trusted project (say, by a
    sandboxed command) never hides that project's rules: it is not trusted, and the trusted
    project further up wins; and a ``.co/`` anyone could have made (``/tmp/.co``) never
    merges the projects below it into one, sharing their grants.
    """
    here = (start or Path.cwd()).resolve()
    home = Path.home().resolve()
    trusted = set(trusted_folders())
    nearest = None
    for folder in (here, *here.parents):
        if folder == home:
            continue
        if folder in trusted:
            return folder
        if nearest is None and (folder / ".co").is_dir() and own_folder(folder):
            nearest = folder
    return nearest


def own_folder(folder: Path) -> bool:
    """Whether ``folder`` and its ``.co`` (a real folder, not a link) belong to the user
    and nobody else can write to them: not world-writable, and group-writable only for
    the user's own group."""
    for path in (folder, folder / ".co"):
        try:
            info = os.lstat(path)
        except OSError:
            return False
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            return False
        if info.st_mode & stat.S_IWOTH:
            return False
        if info.st_mode & stat.S_IWGRP and not _own_group(info.st_gid):
            return False
    return True


@functools.lru_cache(maxsize=32)
def _own_group(gid: int) -> bool:
    """A group only the user is in (a user private group, as Debian makes them)."""
    import grp
    import pwd

    try:
        me = pwd.getpwuid(os.getuid()).pw_name
        group = grp.getgrgid(gid)
        others = [user.pw_name for user in pwd.getpwall() if user.pw_gid == gid]
    except (KeyError, OSError):
        return False
    return set(group.gr_mem) | set(others) <= {me}


def is_trusted(folder: Path) -> bool:
    return folder.resolve() in trusted_folders()
