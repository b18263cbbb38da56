"""What a sandboxed command must not change: whatever git or Co on the host would run.

Git runs what a git directory names (hooks, ``core.fsmonitor``, ``core.pager``) on the
host, and a trusted project's ``.co/`` sets Co's own settings and policy: a command that
could write them would run code, or grant itself permissions, outside the sandbox. Which
paths those are is found by what git reads (``gitexec``): every ``.git`` and ``.co`` at
any depth, ``gitdir:`` targets, the ``core.hooksPath`` folder, files a config runs. Both
sandboxes mount each of them read-only over the read-write workspace. A mount point
cannot be renamed or removed from inside, so ``mv .git x && mkdir .git`` fails as well.

The workspace's own ``.git`` and ``.co``, when missing, are held by an empty placeholder,
mounted read-only like the real thing, so a command cannot create them either: an empty
``.git`` folder (git skips a ``.git`` that is not a repository and looks further up, as if
there were none) and an empty ``.co`` file (Co only takes a ``.co`` folder for a project
folder). ``.co`` only in a folder the user trusted: anywhere else Co ignores a ``.co``, so
one a command makes there is only moved aside after it, like one deeper down. A placeholder is removed once no sandbox needs it: when the bubblewrap command
ends, when the Docker container goes; an empty one is all it ever is. Nothing but a
mount point can hold a name in a folder that the sandbox may write (what a sandbox
creates in a bind-mounted folder lands in the folder itself), so the placeholder has to
be in the project for that long; if Co is killed outright in the meantime, its keeper
(``keeper``) removes it.
Deeper down a placeholder in every folder is not possible, so after each command Co looks
for what git or Co would take that was not there before (a new ``.git`` or ``.co`` in a
subfolder, a repository-shaped folder, a missing hooks folder now made) and moves it
aside (``NAME.co-refused``) before returning (:func:`refuse_new`).

Refusing to run, or checking only after the command, would be weaker for the workspace's
own names: a workspace without a repository is normal, and a file that exists even for a
moment can be acted on by the host (shell prompts run ``git status`` all the time).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from co_core import is_trusted
from co_shell.sandbox import gitexec
from co_shell.sandbox.base import SandboxUnavailable

# name -> what holds it when it is missing
PLACEHOLDERS = {".git": "folder", ".co": "file"}


@dataclass(frozen=True)
class Held:
    """What to mount read-only (workspace-relative paths) and what they are right now."""

    names: tuple[str, ...]
    identity: tuple[tuple[str, str, int, int], ...]  # name, kind, device, inode
    surface: gitexec.Surface = field(default_factory=gitexec.Surface)
    placeholders: tuple[str, ...] = ()  # names held by an empty placeholder of Co's


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "special file"


def hold(workspace: Path) -> Held:
    """Make sure the workspace's own ``.git`` and ``.co`` exist (a placeholder if missing),
    find everything else git would run from, and say what each is.

    A symlinked ``.git`` or ``.co`` at the top is refused: a mount would land on its target
    and the link itself could still be replaced. (Deeper down, a ``.git`` symlink's target
    is held and the link is checked after the command.)
    """
    names, identity, placeholders = [], [], []
    for name, placeholder in PLACEHOLDERS.items():
        path = workspace / name
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            if name == ".co" and not is_trusted(workspace):
                identity.append((name, "absent", 0, 0))  # Co would ignore one: not held
                continue
            if not _make(path, placeholder):
                identity.append((name, "absent", 0, 0))  # nobody can create it: no mount
                continue
            info = os.lstat(path)
        kind = _kind(info.st_mode)
        if kind not in ("folder", "file"):
            raise SandboxUnavailable(
                f"the workspace's {name} is a {kind}, which the sandbox cannot keep read-only; "
                f"replace it with the folder it points to (or, for .git, a 'gitdir: ...' file)"
            )
        names.append(name)
        identity.append((name, kind, info.st_dev, info.st_ino))
        if _empty(path, placeholder):
            placeholders.append(name)
    surface = gitexec.survey(workspace)
    for rel in sorted(surface.protect - set(names)):
        if any(rel.startswith(top + "/") for top in names):
            continue  # inside .git or .co: held with them
        try:
            info = os.lstat(workspace / rel)
        except OSError:
            continue
        kind = _kind(info.st_mode)
        if kind in ("folder", "file"):
            names.append(rel)
            identity.append((rel, kind, info.st_dev, info.st_ino))
    return Held(tuple(names), tuple(identity), surface, tuple(placeholders))


def refuse_new(workspace: Path, held: Held) -> list[str]:
    """After a command: move aside what git or Co would take that the command made.

    Returns one line per path, for the command's output (the model and the user see it).
    """
    ids = {name: (dev, ino) for name, kind, dev, ino in held.identity if kind != "absent"}
    found = gitexec.appeared(workspace, held.surface, ids)
    return [gitexec.refuse(workspace, rel) for rel in found]


def _make(path: Path, kind: str) -> bool:
    """Make the placeholder; False when the workspace folder cannot be written at all.

    Then the sandbox cannot create the name either: on a read-only file system, or (when
    Co is not root) without write permission, since commands run as Co's own uid.
    """
    try:
        if kind == "folder":
            os.mkdir(path, 0o755)
        else:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))
    except FileExistsError:
        pass  # made meanwhile by someone else: hold() looks at what is there
    except OSError as exc:
        denied = exc.errno in (errno.EACCES, errno.EPERM) and os.getuid() != 0
        if exc.errno == errno.EROFS or denied:
            return False
        raise SandboxUnavailable(
            f"cannot hold the name {path.name} in the workspace ({exc.strerror}); the sandbox "
            "needs to place an empty read-only placeholder there"
        ) from exc
    return True


def _empty(path: Path, kind: str) -> bool:
    """Is ``path`` what a placeholder is: an empty folder, or an empty file?"""
    try:
        info = os.lstat(path)
        if kind == "folder":
            return stat.S_ISDIR(info.st_mode) and not os.listdir(path)
        return stat.S_ISREG(info.st_mode) and info.st_size == 0
    except OSError:
        return False


def release(workspace: Path) -> None:
    """Remove the placeholders that are still empty; anything with content stays."""
    for name, placeholder in PLACEHOLDERS.items():
        path = workspace / name
        with contextlib.suppress(OSError):
            info = os.lstat(path)
            if placeholder == "folder" and stat.S_ISDIR(info.st_mode):
                os.rmdir(path)  # fails unless empty
            elif placeholder == "file" and stat.S_ISREG(info.st_mode) and info.st_size == 0:
                os.unlink(path)


@contextlib.contextmanager
def one_at_a_time(workspace: Path) -> Iterator[None]:
    """Hold the workspace for one command, across Co processes (an advisory lock on it).

    Commands of two Co sessions in the same workspace take turns: one session's clean-up
    (ending a call's processes, removing placeholders) never hits the other's command.
    """
    fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
