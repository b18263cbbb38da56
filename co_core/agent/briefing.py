"""What a session's model is told about the user and the project before every request:
the instruction files (co_core.agent.instructions) and the memory
(co_core.agent.memory), as one part of the system prompt.

The instruction files are read once, when the session starts (as Codex and Claude Code
do: an edit applies to the next session). Memory is read again whenever one of its files
changed (a ``/memory add``, the ``remember`` tool, an editor), at the cost of two ``stat``
calls per request. A model Co steers because it is tiny gets at most ``SMALL_BYTES`` of
it, so that a long ``AGENTS.md`` cannot fill a 2,048-token window by itself.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from co_core.agent.instructions import Instructions, InstructionsSettings, for_settings
from co_core.agent.memory import MAX_BYTES, Memory, MemorySettings, load_memory, stamp

SMALL_BYTES = 1500


@dataclass
class Briefing:
    cwd: Path
    instructions: Instructions = field(default_factory=Instructions)
    memory_bytes: int = MAX_BYTES
    added: str = ""  # what the user's session_start hooks said for the model
    withheld: bool = False  # the memory is left out (``/init``: a file for the team)
    _memory: Memory | None = None
    _stamp: tuple[object, ...] = ()
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def read(cls, cwd: Path, settings: Any) -> Briefing:
        section = settings.find(InstructionsSettings) if settings is not None else None
        memory = settings.find(MemorySettings) if settings is not None else None
        return cls(
            cwd,
            for_settings(cwd, section),
            memory.max_bytes if memory is not None else MAX_BYTES,
        )

    @property
    def memory(self) -> Memory:
        """The memory files as they are now (read again only when one changed)."""
        with self._lock:
            now = stamp(self.cwd)
            if self._memory is None or now != self._stamp:
                self._memory, self._stamp = load_memory(self.cwd, self.memory_bytes), now
            return self._memory

    def notices(self) -> list[str]:
        """What the user should hear once, at the start: files skipped or ignored."""
        return [*self.instructions.skipped, *self.memory.notices]

    @contextmanager
    def without_memory(self, withhold: bool = True) -> Iterator[None]:
        """The memory is left out of what the model is told while this lasts: a draft of
        the project's shared ``AGENTS.md`` must not carry the user's own lines."""
        before, self.withheld = self.withheld, withhold or self.withheld
        try:
            yield
        finally:
            self.withheld = before

    def text(self, small: bool = False) -> str:
        hooks = f"## From the user's session_start hooks\n{self.added}" if self.added else ""
        memory = "" if self.withheld else self.memory.prompt()
        parts = [p for p in (self.instructions.prompt(), memory, hooks) if p]
        text = "\n\n".join(parts)
        if small and len(text.encode()) > SMALL_BYTES:
            text = text.encode()[:SMALL_BYTES].decode("utf-8", errors="ignore") + " […]"
        return text

    def __call__(self, ctx: Any) -> str:
        """pydantic-ai's dynamic instructions: read for each request."""
        return self.text(small=bool(getattr(ctx.model, "co_small", False)))

    def parts(self) -> list[tuple[str, str]]:
        """(label, text) of each file the model reads, for ``/context``."""
        out = [(f"{f.path}{' (cut)' if f.cut else ''}", f.text) for f in self.instructions.files]
        out += [(f"{f.path} (memory)", f.text) for f in self.memory.files if f.text.strip()]
        return out

    async def context_lines(
        self, count: Callable[[Sequence[str]], Awaitable[list[int]]]
    ) -> list[str]:
        """``/context``'s lines: each file the model reads, with its tokens (``count``: the
        fitting's counter), and what was left out."""
        parts = self.parts()
        if not parts:
            return ["instructions: none (AGENTS.md here or in the config folder; /init drafts one)"]
        tokens = await count([text for _, text in parts])
        lines = ["instructions and memory (part of the system prompt):"]
        lines += [f"  {n:>7,} tokens  {label}" for (label, _), n in zip(parts, tokens, strict=True)]
        lines += [
            f"  left out: {path} (over instructions.max_bytes)"
            for path in self.instructions.left_out
        ]
        return lines
