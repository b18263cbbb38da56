"""File-change notifications (Linux inotify, through ctypes): edits noticed without a walk.

With a watch on every vault folder, a search learns which notes were created, edited,
renamed or deleted by reading a few bytes instead of stat-ing every note. Anything the
watcher cannot describe exactly (a new or moved folder, a lost watch, an overflowing
queue) asks for a full rescan. Where inotify is unavailable (macOS, some containers),
``Watcher.start`` returns False and the index falls back to periodic full checks.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import sys

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
_EVENT = struct.Struct("iIII")
_RESCAN = IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        return libc
    except (OSError, AttributeError):
        return None


class Watcher:
    """Watches a set of folders; ``changes()`` says which notes to look at again."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._fd = -1
        self._folders: dict[int, str] = {}  # watch descriptor -> vault-relative folder
        self._libc: ctypes.CDLL | None = None
        self._loaded = False  # libc is looked up on first start (find_library runs ldconfig)

    def start(self, folders: list[str]) -> bool:
        """(Re)watch these vault-relative folders; False if notifications are unavailable."""
        self.close()
        if not self._loaded:
            self._libc, self._loaded = _libc(), True
        if self._libc is None:
            return False
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            return False
        self._fd = fd
        for rel in folders:
            path = os.path.join(self.root, rel) if rel else self.root
            wd = self._libc.inotify_add_watch(fd, os.fsencode(path), MASK)
            if wd < 0:  # out of watches, or the folder just went away
                self.close()
                return False
            self._folders[wd] = rel
        return True

    @property
    def active(self) -> bool:
        return self._fd >= 0

    def changes(self) -> tuple[set[str], bool]:
        """(note paths that may have changed, whether a full rescan is needed)."""
        paths: set[str] = set()
        rescan = False
        while self._fd >= 0:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                return paths, True
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                raw = data[offset + _EVENT.size : offset + _EVENT.size + length]
                offset += _EVENT.size + length
                name = os.fsdecode(raw.rstrip(b"\0"))
                if mask & _RESCAN:
                    rescan = True
                    continue
                if name.startswith("."):
                    continue  # hidden files and folders are not part of the vault
                if mask & IN_ISDIR:
                    if mask & (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE):
                        rescan = True  # a folder came or went: walk to (un)watch it
                    continue
                if name[-3:].lower() != ".md":
                    if mask & (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE):
                        rescan = True  # an attachment came or went: links may resolve anew
                    continue
                folder = self._folders.get(wd)
                if folder is None:
                    rescan = True
                    continue
                paths.add(f"{folder}/{name}" if folder else name)
        return paths, rescan

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = -1
        self._folders = {}
