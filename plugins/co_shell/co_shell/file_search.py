"""``search_files``: which workspace files hold some words, and the lines that hold them.

"Which file here mentions an unpaid invoice?" needs neither a command nor a guess at a
file's name: the files are read on the host (as ``read_file`` reads them: through
``pathsafe``, regular files only, no symlink out of the workspace), never run. A file
matches when every word of the query occurs in it or in its path; a word matches where a
word of the text starts with it, so "invoice" finds "Invoices" (case never matters), and
a word in the plural also finds its singular ("invoices" finds "invoice"). A
``"quoted phrase"`` is one word. When no file holds every word, the files holding some
of them are listed apart, those with the rarest words first (the search still found
nothing: its count is 0).

Files the user's rules keep from being read (``fs:read:...`` denied) are never opened:
their text cannot reach the model by this road. Hidden folders, ``.git``, binary files
and files over ``MAX_FILE_BYTES`` are skipped.

One search is bounded: at most ``MAX_TERMS`` words (more is refused, saying how to ask),
and it stops after ``MAX_FILES`` files, ``MAX_BYTES`` read or ``MAX_SECONDS``, whichever
comes first; the result then says where it stopped, so "no file holds it" is never
claimed for files it did not read.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from co_core import ModelRetry, ToolContext, ToolResult
from co_shell import pathsafe

MAX_FILE_BYTES = 1_000_000
MAX_FILES = 5_000  # files read at most by one search
MAX_BYTES = 64_000_000  # bytes read at most by one search
MAX_SECONDS = 10.0  # a search stops reading after this long
MAX_TERMS = 32  # words (or "quoted phrases") in one query
PAGE = 20  # files per page
LINES_SHOWN = 3  # matching lines per file
LINE_CHARS = 200
_PART = re.compile(r'"([^"]*)"?|(\S+)')


@dataclass
class Found:
    """One file that holds words of the query: its path, its first matching lines, and
    which of the query's words it holds."""

    path: str
    lines: list[tuple[int, str]]
    held: set[int]


def terms(query: str) -> list[str]:
    """``unpaid "open invoice"`` -> unpaid, open invoice (trailing punctuation aside)."""
    found = []
    for phrase, word in _PART.findall(query):
        term = " ".join((phrase or word).split()).strip(".,;:!?")
        if term:
            found.append(term)
    return list(dict.fromkeys(found))


def pattern(term: str) -> re.Pattern[str]:
    """Where ``term`` occurs: at the start of a word, in any case ("invoice" in
    "Invoices"); a plural term also as its singular."""
    forms = [term]
    if len(term) > 3 and term[-1:].lower() == "s" and term[-2:].lower() != "ss":
        forms.append(term[:-1])
    body = "|".join(r"\s+".join(map(re.escape, f.split())) for f in forms)
    return re.compile(rf"(?<![^\W_])(?:{body})", re.IGNORECASE)


def _files(root: Path, start: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(start):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        for name in sorted(names):
            yield Path(folder) / name


def _text(root: Path, path: Path) -> str | None:
    """The file's text, or None: not a regular file inside the workspace, too big, binary."""
    try:
        with pathsafe.open_regular(root, path) as handle:
            if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:
                return None
            data = handle.read()
    except (OSError, pathsafe.PathRefused):
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def search_files(ctx: ToolContext, query: str, path: str = ".", page: int = 1) -> ToolResult:
    """Search the text of the workspace's files for words: which file mentions what."""
    wanted = terms(query)
    if not wanted:
        raise ModelRetry('query is empty: give words to search for, e.g. "invoice unpaid"')
    if len(wanted) > MAX_TERMS:
        raise ModelRetry(
            f"the query has {len(wanted):,} words; search_files takes at most {MAX_TERMS}: "
            "give the few words that tell the file apart"
        )
    if page < 1:
        raise ModelRetry("page starts at 1")
    root = Path(os.path.realpath(ctx.deps.workspace))
    try:
        start = pathsafe.resolve(ctx.deps.workspace, path)
    except pathsafe.PathRefused as exc:
        raise ModelRetry(str(exc)) from exc
    if not start.is_dir():
        raise ModelRetry(f"{path!r} is not a folder of the workspace; give a folder, e.g. '.'")
    patterns = [pattern(t) for t in wanted]
    found: list[Found] = []
    some: list[Found] = []  # files holding some of the words
    budget = _Budget()
    for file in _files(root, start):
        if budget.spent():
            break
        rel = pathsafe.relative(ctx.deps.workspace, file)
        if not ctx.deps.allows(f"fs:read:{rel}"):
            continue  # kept from reading: not opened
        text = _text(root, file)
        budget.read(text)
        if text is None:
            continue
        held = {i for i, p in enumerate(patterns) if p.search(text) or p.search(rel)}
        if not held:
            continue
        (found if len(held) == len(patterns) else some).append(
            Found(rel, _lines(text, [patterns[i] for i in held]), held)
        )
    cut = budget.why()
    shown = found[(page - 1) * PAGE : page * PAGE]
    if not shown and page == 1 and some:
        return _some(query, some, len(patterns), cut)
    if not shown:
        where = "" if page == 1 else f" on page {page}"
        return ToolResult.empty(f"No file holds {query!r}{where}{cut}.")
    first = (page - 1) * PAGE + 1
    out = [f"Files holding {query!r} ({first}–{first + len(shown) - 1} of {len(found)}){cut}:"]
    for hit in shown:
        out.append(hit.path)
        out += [f"  {number}: {line}" for number, line in hit.lines]
    more = page * PAGE < len(found)
    if more:
        out.append(f"More: page={page + 1}")
    return ToolResult(
        "\n".join(out),
        count=len(found),
        has_more=more,
        next_page=page + 1 if more else None,
        data={"paths": [hit.path for hit in shown]},
    )


def _lines(text: str, held: list[re.Pattern[str]]) -> list[tuple[int, str]]:
    """The first ``LINES_SHOWN`` lines holding one of the words (no more are looked for)."""
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        if any(p.search(line) for p in held):
            lines.append((number, line.strip()[:LINE_CHARS]))
            if len(lines) == LINES_SHOWN:
                break
    return lines


@dataclass
class _Budget:
    """What one search may read: files, bytes and time; and, once spent, why it stopped."""

    files: int = 0
    size: int = 0
    started: float = 0.0
    stopped: str = ""

    def __post_init__(self) -> None:
        self.started = time.monotonic()

    def read(self, text: str | None) -> None:
        self.files += 1
        self.size += len(text) if text is not None else 0

    def spent(self) -> bool:
        if self.files >= MAX_FILES:
            self.stopped = f"the first {MAX_FILES:,} files read"
        elif self.size >= MAX_BYTES:
            self.stopped = f"stopped after {_size(self.size)} in {self.files:,} files"
        elif time.monotonic() - self.started >= MAX_SECONDS:
            self.stopped = f"stopped after {MAX_SECONDS:g} s, {self.files:,} files read"
        return bool(self.stopped)

    def why(self) -> str:
        """`` (stopped after 10 s, …; path= narrows it)`` when the search stopped early."""
        if not self.stopped:
            return ""
        return f" ({self.stopped}; the rest was not searched: give path= to narrow it)"


def _size(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1e6:.0f} MB"
    return f"{count / 1e3:.0f} KB" if count >= 1000 else f"{count} bytes"


def _some(query: str, some: list[Found], words: int, cut: str) -> ToolResult:
    """No file holds every word: the files holding the rarest of them, best first (a word
    in few files counts more than one in many, as "an" or "the"); the count stays 0."""
    held_by = [sum(i in f.held for f in some) for i in range(words)]
    files = len(some) + 1

    def weight(found: Found) -> float:
        return sum(math.log(files / held_by[i]) for i in found.held)

    best = sorted(some, key=weight, reverse=True)[:PAGE]
    out = [f"No file holds {query!r}{cut}. Files holding some of its words, best first:"]
    for hit in best:
        out.append(hit.path)
        out += [f"  {number}: {line}" for number, line in hit.lines]
    return ToolResult("\n".join(out), count=0, data={"paths": [], "near": [f.path for f in best]})
