"""What git on the host will execute from a workspace, found by what git reads, not by name.

A sandboxed command can write anywhere in the workspace; the user's next ``git status`` or
``git commit`` on the host then runs whatever git takes from there. Git takes code from:

- **git directories**: every ``.git`` folder at any depth (nested repositories, old-style
  submodules), every ``.git`` file's ``gitdir:`` target (submodules, linked worktrees),
  and every folder shaped like a repository (``HEAD`` with ``objects``/``refs`` or a
  ``commondir``: bare repositories, ``.git/modules/*``). Their ``config`` sets programs
  git runs (``core.fsmonitor``, ``core.pager``, aliases, filters, ...) and their
  ``hooks/`` are run.
- **what those configs point to in the work tree**: the ``core.hooksPath`` folder (and the
  folder around it, where hook managers such as husky keep the scripts their hooks call),
  files the hooks name literally (the pre-commit framework's configuration), config files
  pulled in by ``include.path`` / ``includeIf.*.path``, and any file named by a value git
  runs as a program (a filter, fsmonitor, pager or alias script kept in the repository). The configs are read with the host's own git
  (``git config --list --show-origin``), so includes, scopes and quoting are git's; the
  repository that holds the workspace (when it is a subfolder of one) counts as well.

:func:`survey` lists these; the sandbox mounts them read-only. Names that git would take
but that do not exist yet (a nested ``.git``, a hooks folder still to be made) cannot be
held in advance everywhere: :func:`appeared` finds the ones a command created, and the
sandbox moves them aside (``NAME.co-refused``) before anything on the host can use them.

Not protected, and why: ``.gitattributes`` and ``.gitmodules`` only select drivers and
URLs that a config defines (and git ignores ``update = !command`` in ``.gitmodules``);
``.lfsconfig`` sets no program.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

GIT_TIMEOUT = 10.0
HOOK_BYTES = 65536  # of each hook script, scanned for the files it names
# keys whose value git runs as a program, or reads programs from (lower case, as git lists)
PROGRAM_KEYS = re.compile(
    r"^(?:core\.(?:fsmonitor|pager|editor|sshcommand|askpass|gitproxy|hookspath)"
    r"|sequence\.editor|diff\.external|diff\..+\.(?:command|textconv)|merge\..+\.driver"
    r"|filter\..+\.(?:clean|smudge|process)|alias\..+|credential\.(?:.+\.)?helper"
    r"|gpg\.(?:.+\.)?program|pager\..+|interactive\.difffilter"
    r"|(?:merge|diff)tool\..+\.(?:cmd|path)|web\.browser|browser\..+\.(?:cmd|path)"
    r"|man\..+\.(?:cmd|path)|sendemail\..+|uploadpack\.packobjectshook"
    r"|remote\..+\.(?:receivepack|uploadpack)|include\.path|includeif\..+\.path)$"
)
PATH_WORD = re.compile(r"[\w.~+@%-]*/[\w./~+@%-]*|\.[\w.+@%-]+")
REFUSED = ".co-refused"
# what a git directory holds (held one by one when the workspace itself is one)
GIT_DIR_ENTRIES = (
    "HEAD", "config", "config.worktree", "hooks", "info", "objects", "refs", "packed-refs",
    "commondir", "gitdir", "modules", "worktrees", "logs",
)  # fmt: skip


@dataclass
class Surface:
    """Workspace-relative paths: what git would execute from (``protect``, existing), what
    must not appear (``watch``), and ``.git`` symlinks as they are (``links``)."""

    protect: set[str] = field(default_factory=set)
    watch: set[str] = field(default_factory=set)
    links: dict[str, str] = field(default_factory=dict)


def survey(workspace: Path) -> Surface:
    """Everything git would run from in ``workspace`` right now (see the module's doc)."""
    root = Path(os.path.realpath(workspace))
    found = Surface()
    repos: list[tuple[Path, Path]] = []  # (git dir, work tree)
    enclosing = _enclosing_repo(root)
    if enclosing is not None:
        repos.append(enclosing)
    if _is_git_dir(root):  # the workspace is itself a (bare) repository
        found.protect.update(n for n in GIT_DIR_ENTRIES if os.path.lexists(root / n))
        repos.append((root, root))
    for kind, rel in walk(root):
        path = root / rel
        if kind == "colink":
            found.links[rel] = os.readlink(path)  # only watched: a new or changed one goes
            continue
        if kind == "gitlink":
            found.links[rel] = os.readlink(path)
            target = Path(os.path.realpath(path))
            _claim(root, target, found.protect)
            if target.is_dir():
                repos.append((target, path.parent))
            continue
        found.protect.add(rel)
        if kind == "gitdir":
            repos.append((path, path.parent if path.name == ".git" else path))
        elif kind == "gitfile":
            pointed = _gitfile_target(path)
            if pointed is not None:
                _claim(root, pointed, found.protect)
                repos.append((pointed, path.parent))
    for gitdir, worktree in repos:
        if _is_git_dir(gitdir):
            _from_config(root, gitdir, worktree, found)
    found.protect = _outermost(found.protect)
    found.watch = {p for p in found.watch if p not in found.protect}
    found.watch -= {p for p in found.watch if _inside_any(p, found.protect)}
    return found


@dataclass(frozen=True)
class _Listing:
    """What one folder held when it was last read: what ``walk`` reports from it."""

    stamp: tuple[int, int, int]  # device, inode, ctime (ns) when it was read
    trusted: bool  # its ctime was already old then: any later change gives a new one
    shaped: bool  # the folder itself looks like a git directory
    found: tuple[tuple[str, str], ...]  # (kind, name) of its .git and .co entries
    subdirs: tuple[str, ...]


_listings: dict[Path, dict[str, _Listing]] = {}  # per workspace, from the last walk


def walk(root: Path) -> Iterator[tuple[str, str]]:
    """``(kind, workspace-relative path)`` of every git directory (``gitdir``), ``.git``
    file (``gitfile``), ``.git`` symlink (``gitlink``), other ``.git`` entry (``other``),
    ``.co`` folder (``co``) and ``.co`` symlink (``colink``) in the tree; none of them is entered, no symlink followed.
    The workspace's own ``.git`` and ``.co`` are included.

    Every folder is looked at each time, but only read again when its ctime changed (an
    entry added, removed or renamed, or its times set: a command cannot set a ctime), or
    when it had changed too recently to trust that (file times are coarse).
    """
    before = _listings.get(root, {})
    seen: dict[str, _Listing] = {}
    base = str(root)
    stack = [""]
    while stack:
        rel = stack.pop()
        path = f"{base}/{rel}" if rel else base  # strings: this loop runs per folder
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode):
            continue
        stamp = (info.st_dev, info.st_ino, info.st_ctime_ns)
        listing = before.get(rel)
        if listing is None or not listing.trusted or listing.stamp != stamp:
            listing = _read(path, stamp)
            if listing is None:
                continue
        seen[rel] = listing
        if rel and listing.shaped:
            yield "gitdir", rel
            continue
        for kind, name in listing.found:
            yield kind, f"{rel}/{name}" if rel else name
        stack.extend(f"{rel}/{name}" if rel else name for name in listing.subdirs)
    _listings[root] = seen


HOT_NS = 2_000_000_000  # a ctime this recent may not have moved on with the next change


def _read(path: str, stamp: tuple[int, int, int]) -> _Listing | None:
    trusted = time.time_ns() - stamp[2] > HOT_NS  # decided before reading: errs on rereading
    found: list[tuple[str, str]] = []
    subdirs: list[str] = []
    names: list[str] = []
    try:
        with os.scandir(path) as it:
            for entry in it:
                name = entry.name
                names.append(name)
                is_dir = entry.is_dir(follow_symlinks=False)  # from the listing: no stat
                if name == ".git":
                    if is_dir:
                        kind = "gitdir"
                    elif entry.is_file(follow_symlinks=False):
                        kind = "gitfile"
                    else:
                        kind = "gitlink" if entry.is_symlink() else "other"
                    found.append((kind, name))
                elif is_dir:
                    if name == ".co":
                        found.append(("co", name))
                    else:
                        subdirs.append(name)
                elif name == ".co" and entry.is_symlink():
                    found.append(("colink", name))  # Co's is_dir() follows it
    except OSError:
        return None
    return _Listing(stamp, trusted, _looks_like_git_dir(names), tuple(found), tuple(subdirs))


def _looks_like_git_dir(names: Collection[str]) -> bool:
    """Git's own test, loosely (``is_git_directory``): a ``HEAD``, and ``objects`` and
    ``refs`` or a ``commondir`` file naming where they are."""
    return "HEAD" in names and (("objects" in names and "refs" in names) or "commondir" in names)


def _is_git_dir(path: Path) -> bool:
    try:
        return _looks_like_git_dir(os.listdir(path))
    except OSError:
        return False


def appeared(workspace: Path, before: Surface, held: dict[str, tuple[int, int]]) -> list[str]:
    """What a command made that git (or Co) would take: a ``.git``, a ``.co`` folder or a
    repository-shaped folder that is not what was ``held`` (path -> device and inode; a
    held one moved elsewhere with its folder is still itself), something new at a held
    path (its folder was moved away and made again), a watched path, a changed ``.git``
    symlink."""
    root = Path(os.path.realpath(workspace))
    kept = set(held.values())
    new = []
    for kind, rel in walk(root):
        if kind in ("gitlink", "colink"):
            try:
                if before.links.get(rel) == os.readlink(root / rel):
                    continue
            except OSError:
                pass
            new.append(rel)
        elif rel in held:
            if _identity(root / rel) != held[rel]:
                new.append(rel)
        elif not _inside_any(rel, held) and _identity(root / rel) not in kept:
            new.append(rel)
    for rel, identity in sorted(held.items()):
        if rel not in new and os.path.lexists(root / rel) and _identity(root / rel) != identity:
            new.append(rel)
    for rel in sorted(before.watch):
        if os.path.lexists(root / rel) and rel not in new:
            new.append(rel)
    return new


def _identity(path: Path) -> tuple[int, int]:
    try:
        info = os.lstat(path)
    except OSError:
        return (-1, -1)
    return (info.st_dev, info.st_ino)


def refuse(workspace: Path, rel: str) -> str:
    """Move ``rel`` aside so git no longer takes it; returns what was done, in words.

    A repository's ``HEAD`` is renamed too, so the moved folder is no repository either.
    """
    root = Path(os.path.realpath(workspace))
    path = root / rel
    try:
        if path.is_dir() and not path.is_symlink() and os.path.lexists(path / "HEAD"):
            _rename(path / "HEAD", _free(path / ("HEAD" + REFUSED)))
            if path.name not in (".git", ".co"):
                return f"{rel} (renamed its HEAD to HEAD{REFUSED})"
        target = _free(path.with_name(path.name + REFUSED))
        _rename(path, target)
    except OSError as exc:
        return f"{rel} (could not be moved aside: {exc.strerror}; delete it before using git)"
    return f"{rel} (moved to {target.relative_to(root)})"


def _rename(source: Path, target: Path) -> None:
    """Rename, first making the folder writable if the command took that away."""
    try:
        os.rename(source, target)
    except PermissionError:
        folder = source.parent
        os.chmod(folder, stat.S_IMODE(os.lstat(folder).st_mode) | stat.S_IRWXU)
        os.rename(source, target)


def _free(path: Path) -> Path:
    candidate, n = path, 1
    while os.path.lexists(candidate):
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


# -- git's configuration ------------------------------------------------------------------


def _enclosing_repo(root: Path) -> tuple[Path, Path] | None:
    """The repository the workspace is a subfolder of, if any: (git dir, work tree)."""
    for folder in root.parents:
        dot = folder / ".git"
        if dot.is_dir():
            return dot, folder
        if dot.is_file():
            target = _gitfile_target(dot)
            return (target, folder) if target is not None else None
    return None


def _gitfile_target(path: Path) -> Path | None:
    """Where a ``gitdir: ...`` file points (relative to the file's folder), resolved."""
    try:  # never blocks, never follows a link: whatever it is now, it is only read
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            text = handle.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return None
    first = text.splitlines()[0] if text else ""
    if not first.startswith("gitdir:"):
        return None
    where = first[len("gitdir:") :].strip()
    return Path(os.path.realpath(path.parent / where)) if where else None


Setting = tuple[str, str, str]  # origin file, key (lower case), value
_configs: dict[Path, tuple[tuple[object, ...], list[Setting]]] = {}


def _config(gitdir: Path) -> list[Setting]:
    """Every setting git sees for ``gitdir``, includes followed; empty when git is not
    installed (then nothing on the host runs it either). Read again only when one of the
    files it came from (or could come from) changed."""
    cached = _configs.get(gitdir)
    if cached is not None and cached[0] == _stamps(gitdir, cached[1]):
        return cached[1]
    settings = _read_config(gitdir)
    _configs[gitdir] = (_stamps(gitdir, settings), settings)
    return settings


def _stamps(gitdir: Path, settings: list[Setting]) -> tuple[object, ...]:
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    files = {gitdir / "config", gitdir / "config.worktree", gitdir / "commondir"}
    files |= {home / ".gitconfig", xdg / "git" / "config", Path("/etc/gitconfig")}
    for origin, key, value in settings:
        if os.path.isabs(origin):
            files.add(Path(origin))
        if key == "include.path" or key.startswith("includeif."):
            base = Path(origin).parent if os.path.isabs(origin) else gitdir
            files.add(Path(os.path.expanduser(value)) if value.startswith("~") else base / value)
    out: list[object] = []
    for path in sorted(files):
        try:
            info = os.stat(path)
            out.append((str(path), info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size))
        except OSError:
            out.append((str(path), None))
    return tuple(out)


def _read_config(gitdir: Path) -> list[Setting]:
    exe = shutil.which("git")
    if exe is None:
        return []
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        done = subprocess.run(
            [exe, f"--git-dir={gitdir}", "config", "--list", "--null", "--show-origin"],
            capture_output=True,
            env=env,
            timeout=GIT_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    items = done.stdout.decode("utf-8", errors="surrogateescape").split("\0")
    out = []
    for origin, entry in zip(items[::2], items[1::2], strict=False):
        key, _, value = entry.partition("\n")
        out.append((origin.removeprefix("file:"), key.lower(), value))
    return out


def _from_config(root: Path, gitdir: Path, worktree: Path, found: Surface) -> None:
    hooks_path = None
    for origin, key, value in _config(gitdir):
        if key == "core.hookspath":
            hooks_path = value
            continue
        if PROGRAM_KEYS.match(key) is None:
            continue  # other values name nothing git runs (a template, an excludes file)
        base = worktree
        if key == "include.path" or key.startswith("includeif."):
            base = Path(origin).parent if os.path.isabs(origin) else gitdir
        for word in _path_words(value):
            target = _resolve(word, base)
            if target is None:
                continue
            if os.path.isfile(target):
                _claim(root, target, found.protect)
            elif not os.path.lexists(target):
                _claim(root, target, found.watch, real=False)
    if hooks_path:
        folder = _resolve(hooks_path.strip(), worktree)
        if folder is not None:
            _hooks_folder(root, worktree, folder, found)
            _named_by_hooks(root, worktree, folder, found)
    else:
        _named_by_hooks(root, worktree, gitdir / "hooks", found)


def _hooks_folder(root: Path, worktree: Path, folder: Path, found: Surface) -> None:
    """The configured hooks folder, and the folder around it (where husky keeps the
    scripts its hooks run) unless that is the work tree itself."""
    if not os.path.lexists(folder):
        _claim(root, folder, found.watch, real=False)
        return
    _claim(root, folder, found.protect)
    real = Path(os.path.realpath(folder))
    if real.parent != Path(os.path.realpath(worktree)):
        _claim(root, real.parent, found.protect)


def _named_by_hooks(root: Path, worktree: Path, folder: Path, found: Surface) -> None:
    """Files the hooks name literally (``./scripts/lint.sh``, the pre-commit framework's
    ``.pre-commit-config.yaml``), relative to the work tree where hooks run."""
    try:
        hooks = [
            e.path
            for e in os.scandir(folder)
            if e.is_file(follow_symlinks=False) and not e.name.endswith(".sample")
        ]
    except OSError:
        return
    for hook in hooks:
        try:
            fd = os.open(hook, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                text = handle.read(HOOK_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        for word in PATH_WORD.findall(text):
            target = _resolve(word, worktree)
            if target is not None and os.path.isfile(target):
                _claim(root, target, found.protect)


def _path_words(value: str) -> list[str]:
    """The words of a config value that may name a file: ``!./x.sh``, ``--x=./y``, ``.z``."""
    text = value.removeprefix("!")
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    out = []
    for word in words:
        for piece in word.split("="):
            if "/" in piece or piece.startswith((".", "~")):
                if "://" not in piece:
                    out.append(piece)
    return out


def _resolve(word: str, base: Path) -> Path | None:
    word = word.strip()
    if not word:
        return None
    if word.startswith("~"):
        word = os.path.expanduser(word)
    path = Path(word)
    return path if path.is_absolute() else base / path


def _claim(root: Path, target: Path, into: set[str], *, real: bool = True) -> None:
    """Add ``target`` (symlinks resolved, unless ``real`` is False) if it is in the workspace."""
    path = Path(os.path.realpath(target)) if real else Path(os.path.normpath(target))
    if path != root and path.is_relative_to(root):
        into.add(str(path.relative_to(root)))


def _inside_any(rel: str, folders: Collection[str]) -> bool:
    return any(rel.startswith(folder + "/") for folder in folders)


def _outermost(paths: set[str]) -> set[str]:
    """Drop paths inside another one of the set (mounting the outer one holds them)."""
    return {p for p in paths if not _inside_any(p, paths)}
