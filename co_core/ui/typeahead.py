"""What the user types while Co is busy: kept for the chat, never taken as an answer.

Between prompts the terminal is in its usual (cooked) mode: keys typed while a turn ran
were echoed onto the spinner's line, and the next prompt to read the keyboard got them,
so an approval or download question took a message meant for the chat as its answer.
While a turn runs, :meth:`TypeAhead.quiet` turns echo off (the keys wait in the terminal,
unseen; Ctrl+C still interrupts); before a question and when the turn ends, what waits is
read (:meth:`TypeAhead.drain`) and kept, and the next ``co>`` prompt starts with it
(:meth:`TypeAhead.take`), to be sent or edited. Nothing typed is lost, nothing is sent
unseen.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import sys
from collections.abc import Iterator

# escape sequences a key sends (arrows, function keys) and the terminal's own replies
_SEQUENCE = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|O.|.)?")


def cleaned(raw: str) -> str:
    """Typed keys as the text they would have made at a prompt: backspaces applied,
    escape sequences and control keys dropped, Enter as a new line (none at the end)."""
    text: list[str] = []
    for ch in _SEQUENCE.sub("", raw.replace("\r\n", "\n").replace("\r", "\n")):
        if ch in ("\x7f", "\b"):
            if text and text[-1] != "\n":
                text.pop()
        elif ch in ("\n", "\t") or ch.isprintable():
            text.append(ch)
    return "".join(text).strip("\n")


class TypeAhead:
    """The keys typed ahead, for one terminal (stdin, when it is one)."""

    def __init__(self, fd: int | None = None) -> None:
        if fd is None:
            try:
                fd = sys.stdin.fileno()
            except (OSError, ValueError):
                fd = -1
        self.fd = fd if fd >= 0 and os.isatty(fd) else -1
        self._raw = b""
        self._kept = ""

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """While inside: what is typed is not echoed and waits, whole lines or not."""
        if self.fd < 0:
            yield
            return
        import termios

        try:
            before = termios.tcgetattr(self.fd)
            after = termios.tcgetattr(self.fd)
            after[3] &= ~(termios.ECHO | termios.ICANON)  # signals (Ctrl+C) stay on
            termios.tcsetattr(self.fd, termios.TCSANOW, after)
        except termios.error:
            yield
            return
        try:
            yield
        finally:
            self.drain()
            with contextlib.suppress(termios.error):
                termios.tcsetattr(self.fd, termios.TCSANOW, before)

    def drain(self) -> None:
        """Read what waits in the terminal now (before a question reads the keyboard)."""
        if self.fd < 0:
            return
        with contextlib.suppress(OSError, ValueError):
            while select.select([self.fd], [], [], 0)[0]:
                chunk = os.read(self.fd, 4096)
                if not chunk:
                    break
                self._raw += chunk

    def keep(self, text: str) -> None:
        """Keep ``text`` for the chat (typed at a question, but not an answer to it)."""
        self.drain()
        self._kept += self._decoded() + text

    def take(self) -> str:
        """Everything kept, as the next prompt's text; nothing is kept afterwards."""
        self.drain()
        text = cleaned(self._kept + self._decoded())
        self._kept = ""
        return text

    def _decoded(self) -> str:
        raw, self._raw = self._raw, b""
        return raw.decode("utf-8", errors="ignore")
