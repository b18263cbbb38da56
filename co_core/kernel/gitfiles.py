"""A workspace's files as the user sees them: what git lists, without what it ignores.

``git ls-files --cached --others --exclude-standard`` says it (every ``.gitignore``,
``.git/info/exclude`` and the global excludes file: git's own reading, not a copy of its
rules). It runs with ``core.fsmonitor`` off: ``ls-files`` runs no other program a
repository's config can name, so listing files never starts one. Outside a git
repository, or in one git will not read (owned by someone else), a walk stands in,
leaving out hidden files and folders.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

SAFE_GIT = ("-c", "core.fsmonitor=false")
WALK_LIMIT = 20_000  # files a walk reads, at most


def workspace_files(root: Path, limit: int = WALK_LIMIT) -> list[str]:
    """``root``'s files, relative and ``/``-separated, sorted; ignored ones left out."""
    try:
        out = subprocess.run(
            ["git", *SAFE_GIT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            timeout=10,
            check=True,
        ).stdout
        return sorted(p for p in out.decode("utf-8", "replace").split("\0") if p)
    except (OSError, subprocess.SubprocessError):
        pass
    found: list[str] = []
    for path in root.rglob("*"):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if not path.is_dir():
            found.append(relative.as_posix())
        if len(found) >= limit:
            break
    return sorted(found)
