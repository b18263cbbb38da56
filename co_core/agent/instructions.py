"""Project instructions: the ``AGENTS.md`` files a session's model reads.

``AGENTS.md`` is the instructions file several assistants share (agents.md). Co reads the
user's own (in the config folder), then one file per folder from the project's top down
to the working folder, nearest last, so the most specific words come last. In each folder
the first name found counts: ``AGENTS.md``, then the names ``instructions.files`` adds
(``CLAUDE.md``, ``GEMINI.md``, ``CO.md``). Together they stay within
``instructions.max_bytes`` (32 KiB, as Codex): files are taken in order until the budget
is spent, the one that crosses it is cut, later ones are left out, and ``/context`` says
so.

They are text for the model, never rules: nothing in them reaches the policy, which
decides every call as it would without them. They are read in untrusted folders too (a
cloned repository's notes are what they are for), never through a symbolic link.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from co_core.kernel import paths, trust
from co_core.kernel.settings import SectionModel, setting
from co_core.kernel.userfiles import read_text, why_unreadable

NAME = "AGENTS.md"
MAX_BYTES = 32 * 1024

Where = Literal["user", "project"]


class InstructionsSettings(SectionModel):
    files: list[str] = setting(
        [],
        env="CO_INSTRUCTIONS_FILES",
        help="more instruction file names read after AGENTS.md, e.g. CLAUDE.md, GEMINI.md",
    )
    max_bytes: int = setting(
        MAX_BYTES,
        env="CO_INSTRUCTIONS_MAX_BYTES",
        ge=0,
        help="bytes of instruction files given to the model, all files together",
    )


@dataclass(frozen=True)
class InstructionFile:
    path: Path
    text: str  # as given to the model (cut when the budget ran out in it)
    where: Where
    size: int  # bytes on disk
    cut: bool = False

    @property
    def label(self) -> str:
        return "user" if self.where == "user" else "project"


@dataclass(frozen=True)
class Instructions:
    """What was found for one session, in the order the model reads it."""

    files: tuple[InstructionFile, ...] = ()
    left_out: tuple[Path, ...] = ()  # over the budget
    skipped: tuple[str, ...] = ()  # could not be read: why, one line each
    max_bytes: int = MAX_BYTES

    def prompt(self) -> str:
        """The system prompt's part, or "" when there are none."""
        if not self.files:
            return ""
        parts = [
            "## Instructions from the user and the project",
            "The files below are notes for you from the user and this project's authors. "
            "Follow them where they apply. They are not permissions: every tool call is "
            "still decided by Co's policy, whatever they say.",
        ]
        for found in self.files:
            note = " (cut: over the size budget)" if found.cut else ""
            parts.append(f"### {found.path}{note}\n{found.text.strip()}")
        return "\n\n".join(parts)

    def lines(self) -> list[str]:
        """One line per file for ``co status`` and ``/context``'s caption."""
        out = [
            f"{f.path} ({f.label}, {f.size:,} bytes{', cut' if f.cut else ''})" for f in self.files
        ]
        out += [
            f"{p} (left out: over instructions.max_bytes {self.max_bytes:,})" for p in self.left_out
        ]
        return out + list(self.skipped)


def project_top(cwd: Path) -> Path:
    """Where the project's instructions start: the git repository's top or Co's project
    folder (``co trust``, ``.co/``), whichever is higher; else the working folder."""
    here = cwd.resolve()
    found = [here]
    root = trust.project_root(here)
    if root is not None:
        found.append(root)
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            found.append(folder)
            break
    return min(found, key=lambda p: len(p.parts))


def folders(cwd: Path) -> list[Path]:
    """The project's top down to ``cwd``."""
    here = cwd.resolve()
    top = project_top(here)
    chain = [here, *here.parents]
    return list(reversed(chain[: chain.index(top) + 1]))


@dataclass
class _Reading:
    budget: int
    files: list[InstructionFile] = field(default_factory=list)
    left_out: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def take(self, folder: Path, names: Sequence[str], where: Where) -> None:
        for name in names:
            path = folder / name
            try:
                found = read_text(path, max(self.budget, 0) + 1)
            except FileNotFoundError:
                continue
            except OSError as exc:
                self.skipped.append(f"{path}: skipped: {why_unreadable(exc)}")
                return
            if not found.text.strip():
                continue  # empty: the next name may say something
            if self.budget <= 0:
                self.left_out.append(path)
                return
            data = found.text.encode()
            cut = found.cut or len(data) > self.budget
            text = data[: self.budget].decode("utf-8", errors="ignore") if cut else found.text
            self.budget -= len(text.encode())
            self.files.append(InstructionFile(path, text, where, found.size, cut))
            return


def find_instructions(
    cwd: Path, extra_names: Sequence[str] = (), max_bytes: int = MAX_BYTES
) -> Instructions:
    """The instruction files a session started in ``cwd`` gives its model."""
    names = list(dict.fromkeys([NAME, *(n for n in extra_names if n and "/" not in n)]))
    reading = _Reading(max_bytes)
    reading.take(paths.config_dir(), names, "user")
    for folder in folders(cwd):
        reading.take(folder, names, "project")
    return Instructions(
        tuple(reading.files), tuple(reading.left_out), tuple(reading.skipped), max_bytes
    )


def for_settings(cwd: Path, section: InstructionsSettings | None) -> Instructions:
    if section is None:
        return find_instructions(cwd)
    return find_instructions(cwd, section.files, section.max_bytes)
