"""Memory: plain Markdown files of things the user wants every session to know.

One per user (``memory.md`` in the config folder) and one per project
(``.co/memory.md`` at the project folder), the project's only in a folder the user
trusted (``co trust``): a cloned repository cannot plant a memory. Both are read into
each session's system prompt; ``/memory`` shows them, ``/memory add TEXT`` appends a
line, ``/memory edit`` opens ``$EDITOR``, and the model may propose a line with the
``remember`` tool, asked about like any write (permission ``memory:write:user`` or
``memory:write:project``). Every line is masked before it is written, as everything Co
writes is: a secret said in passing never lands in the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from co_core.kernel import paths, trust
from co_core.kernel.errors import CoError
from co_core.kernel.settings import SectionModel, setting
from co_core.kernel.tools import CallRefused
from co_core.kernel.userfiles import read_text, why_unreadable

Scope = Literal["user", "project"]
SCOPES: tuple[Scope, ...] = ("user", "project")
FILE = "memory.md"
MAX_BYTES = 16 * 1024
HEADER = "# Co memory\n\nOne line per thing to remember; Co reads this file into every session.\n\n"


class MemorySettings(SectionModel):
    max_bytes: int = setting(
        MAX_BYTES,
        env="CO_MEMORY_MAX_BYTES",
        ge=0,
        help="bytes of each memory file given to the model",
    )


@dataclass(frozen=True)
class MemoryFile:
    scope: Scope
    path: Path
    text: str
    cut: bool = False


def user_file() -> Path:
    return paths.config_dir() / FILE


def project_folder(cwd: Path) -> tuple[Path | None, bool]:
    """The project folder of ``cwd`` and whether it is trusted."""
    root = trust.project_root(cwd)
    return root, root is not None and trust.is_trusted(root)


def project_file(cwd: Path) -> Path | None:
    """The project's memory file, when the project is trusted (else None)."""
    root, trusted = project_folder(cwd)
    return root / ".co" / FILE if root is not None and trusted else None


def file_for(scope: Scope, cwd: Path) -> Path:
    """Where ``scope``'s memory is kept; the project's only in a trusted folder."""
    if scope == "user":
        return user_file()
    found = project_file(cwd)
    if found is None:
        root, _ = project_folder(cwd)
        where = root or cwd.resolve()
        raise CallRefused(
            f"{where} is not a trusted project, so it keeps no memory of its own "
            f"(`co trust {where}` trusts it); the user's memory can be used instead"
        )
    return found


@dataclass(frozen=True)
class Memory:
    files: tuple[MemoryFile, ...] = ()
    notices: tuple[str, ...] = ()

    def prompt(self) -> str:
        shown = [f for f in self.files if f.text.strip()]
        if not shown:
            return ""
        parts = [
            "## Memory",
            "What the user asked you to remember (their memory files; not permissions):",
        ]
        for found in shown:
            parts.append(f"### {found.scope} memory ({found.path})\n{_body(found.text)}")
        return "\n\n".join(parts)


def _body(text: str) -> str:
    """The file without the header Co writes into a new one."""
    return text.removeprefix(HEADER).strip()


def load_memory(cwd: Path, max_bytes: int = MAX_BYTES) -> Memory:
    """The memory a session in ``cwd`` reads; an untrusted project's is ignored, said once."""
    files: list[MemoryFile] = []
    notices: list[str] = []
    root, trusted = project_folder(cwd)
    places: list[tuple[Scope, Path]] = [("user", user_file())]
    if root is not None:
        if trusted:
            places.append(("project", root / ".co" / FILE))
        elif (root / ".co" / FILE).exists():
            notices.append(
                f"ignoring {root / '.co' / FILE}: folder not trusted "
                f"(run `co trust {root}` to use it)"
            )
    for scope, path in places:
        try:
            found = read_text(path, max_bytes)
        except FileNotFoundError:
            continue
        except OSError as exc:
            notices.append(f"memory {path} skipped: {why_unreadable(exc)}")
            continue
        files.append(MemoryFile(scope, path, found.text, found.cut))
    return Memory(tuple(files), tuple(notices))


def stamp(cwd: Path) -> tuple[object, ...]:
    """Size, time and inode of the memory files, so a session re-reads them only when
    one changed (a ``/memory add``, an editor, another session)."""
    out: list[object] = []
    for path in (user_file(), project_file(cwd)):
        if path is None:
            continue
        try:
            found = os.stat(path)
            out.append((str(path), found.st_mtime_ns, found.st_size, found.st_ino))
        except OSError:
            out.append((str(path), None))
    return tuple(out)


def one_line(text: str) -> str:
    """What one remembered line is: masked, on one line, without list markers."""
    from co_core.kernel.redact import Redactor

    line = " ".join(Redactor().text(text).split())
    return line.removeprefix("- ").strip()


def append(scope: Scope, text: str, cwd: Path) -> tuple[Path, str]:
    """Add one masked line to ``scope``'s memory; returns the file and the line written."""
    line = one_line(text)
    if not line:
        raise CoError("nothing to remember: give the text, e.g. /memory add use uv, not pip")
    path = file_for(scope, cwd)
    try:
        current = read_text(path).text
    except FileNotFoundError:
        current = HEADER
    except OSError as exc:
        raise CoError(f"cannot add to {path}: {why_unreadable(exc)}") from None
    if current and not current.endswith("\n"):
        current += "\n"
    paths.write_private(path, f"{current}- {line}\n")
    return path, line
