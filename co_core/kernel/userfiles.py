"""The Markdown files people give Co: instructions, memory, their own commands.

They are read as text for the model or the prompt, so reading one must never reach
anything else: only a regular file is read, never through a symbolic link (a cloned
repository's ``AGENTS.md -> ~/.ssh/id_rsa`` would otherwise send a key to the model), never
a FIFO that would block, and never more than a bound. A file that cannot be read so is
skipped with the reason, never a traceback.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path


class Unreadable(OSError):
    """A file Co will not read as text: a link, not a regular file, or not UTF-8."""


@dataclass(frozen=True)
class TextFile:
    """A file's text (cut to the bound asked for) and its whole size on disk."""

    path: Path
    text: str
    size: int
    cut: bool  # the text is the first ``limit`` bytes only


def read_text(path: Path, limit: int | None = None) -> TextFile:
    """``path``'s text, at most ``limit`` bytes of it (cut at a character boundary).

    Raises FileNotFoundError when there is no such file, :class:`Unreadable` when it is a
    link, a folder or a device, or not text; other OSErrors as they come.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unreadable(f"{path} is a symbolic link (not followed)") from None
        raise
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise Unreadable(f"{path} is not a regular file")
        wanted = found.st_size if limit is None else min(found.st_size, limit)
        chunks: list[bytes] = []
        left = wanted
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    cut = limit is not None and found.st_size > limit
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not (cut and exc.start >= len(data) - 3):  # a character cut by the bound is not
            raise Unreadable(f"{path} is not UTF-8 text") from None
        text = data[: exc.start].decode("utf-8")
    return TextFile(path, text, found.st_size, cut)


def why_unreadable(exc: OSError) -> str:
    """One line saying why a file was skipped."""
    if isinstance(exc, Unreadable):
        return str(exc)
    return f"{exc.filename or 'file'}: {exc.strerror or exc}"
