"""Pages of a search, and the user's rules applied to them, at a cost that does not grow
with the page number.

A query's ranked candidates and what is known of them (read and checked against the
query, allowed or not) are kept for its next pages, until the index changes. Which
notes the user's rules let be read is asked once per note for one version of the rules
(:class:`Verdicts`), not once per page. Where the index's match is the query's match
(:attr:`co_obsidian.text.Query.index_exact`: plain words), the notes before the asked
page are counted as the index says and only the notes shown are read; otherwise every
note before the page is read once and checked. The index asks the rules about every
note behind its answers once it is built, so a later page seldom has to.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

Allowed = Callable[[str], bool]


@dataclass
class Hit:
    path: str
    text: str


@dataclass
class Pages:
    """What one query found so far (valid for one generation of the index)."""

    generation: int
    candidates: list[str] = field(default_factory=list)  # best first, as read so far
    matches: dict[str, bool] = field(default_factory=dict)  # read and checked
    exhausted: bool = False


class Verdicts:
    """The user's rules on each note's path (and on a symlinked note's target), asked
    once per note for one version of the rules: kept until the rules change, or the
    note does (:meth:`forget`)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._version: Hashable = None
        self._memo: dict[str, bool] = {}

    def check(self, allowed: Allowed | None, links: set[str]) -> Allowed:
        if allowed is None:
            return lambda path: True
        version = getattr(allowed, "version", None)

        def ok(path: str) -> bool:
            if not allowed(path):
                return False
            return path not in links or self._target_allowed(allowed, path)

        if version is None:
            return ok
        if self._version != version:
            self._version, self._memo = version, {}
        memo = self._memo

        def remembered(path: str) -> bool:
            verdict = memo.get(path)
            if verdict is None:
                verdict = memo[path] = ok(path)
            return verdict

        return remembered

    def warm(self, allowed: Allowed | None, links: set[str], paths: Iterable[str]) -> None:
        """Ask about these notes now (the builder does, behind the answers)."""
        check = self.check(allowed, links)
        for path in paths:
            check(path)

    def forget(self, paths: Iterable[str]) -> None:
        """These notes changed: ask about them again (a symlink may lead elsewhere)."""
        for path in paths:
            self._memo.pop(path, None)

    def _target_allowed(self, allowed: Allowed, path: str) -> bool:
        target = self.inside(path)
        return target is not None and (target == path or allowed(target))

    def inside(self, path: str) -> str | None:
        """The vault path ``path`` really leads to (symlinks followed), or None when
        that is outside the vault."""
        real = os.path.realpath(self.root / path)
        if not real.startswith(str(self.root) + os.sep):
            return None
        return Path(real).relative_to(self.root).as_posix()


def page(
    pages: Pages,
    stream: Callable[[], Iterator[str]],
    matches: Callable[[str], str | None],
    ok: Allowed,
    offset: int,
    limit: int,
    exact: bool,
) -> tuple[list[Hit], bool]:
    """Hits ``offset .. offset+limit`` of the candidates ``stream()`` ranks, and whether
    more exist. ``matches(path)``: the note's text if it matches the query now, else
    None. ``exact``: the candidates are the matches (only the notes shown are read)."""
    hits: list[Hit] = []
    accepted = 0
    source: Iterator[str] | None = None
    index = 0
    while True:
        if index == len(pages.candidates):
            if pages.exhausted:
                return hits, False
            if source is None:
                source = _skip(stream(), len(pages.candidates))
            following = next(source, None)
            if following is None:
                pages.exhausted = True
                return hits, False
            pages.candidates.append(following)
        path = pages.candidates[index]
        index += 1
        if pages.matches.get(path) is False or not ok(path):
            continue
        shown = offset <= accepted < offset + limit
        if shown:
            text = matches(path)
            pages.matches[path] = text is not None
            if text is None:
                continue
            hits.append(Hit(path, text))
        elif not (exact and path not in pages.matches):
            known = pages.matches.get(path)
            if known is None:
                known = pages.matches[path] = matches(path) is not None
            if not known:
                continue
        if accepted >= offset + limit:
            return hits, True
        accepted += 1


def _skip(items: Iterator[str], count: int) -> Iterator[str]:
    for _ in range(count):
        if next(items, None) is None:
            break
    return items
