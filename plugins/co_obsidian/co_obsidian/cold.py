"""Search without the index: how the first searches of a vault are answered while the
index is built in the background.

``rg`` reads the notes (several times faster than Python), one run per query term; the
term that looks rarest in a small sample of notes is counted in the whole vault first,
and the others only in the notes that hold it, so a query with one rare word costs about
one ``rg`` scan however many words it has. A term may also match a note's file name
instead of its text (as in the index: folder names do not count). The notes holding every term are ranked like the index ranks them,
approximately: title matches first, then matching lines for the note's length (no
heading bonus: that would mean reading every candidate). rg only preselects: the caller
reads the candidates best first and keeps those whose real text matches.
"""

from __future__ import annotations

import bisect
import itertools
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from co_obsidian import rgscan
from co_obsidian import text as T
from co_obsidian.vault import read_bytes, read_text

SAMPLE = 100  # notes read to guess which term is rarest
SAMPLE_BYTES = 16384  # of each sampled note
MAX_CHARS = 5_000_000  # as much of a note as the index holds (index.MAX_INDEX_CHARS)
# After the first term, notes holding it up to this many bytes in all are read here
# rather than by another rg run (starting rg costs about what reading 300 KB here does)
PYTHON_STAGE_BYTES = 300_000
# A further term in at least this share of the sampled notes is not counted: it tells
# notes apart as little as BM25 would weigh it (near nothing), and the notes shown are
# verified against every term anyway, so the few without it are skipped there.
COMMON_SHARE = 0.5


def sample(names: list[str], links: list[str]) -> list[str]:
    """Up to SAMPLE notes spread over the vault (not symlinks: rg skips those too)."""
    skip = set(links)
    step = max(1, len(names) // SAMPLE)
    return [n for n in names[::step] if n not in skip][:SAMPLE]


def sizes(root: Path, rels: list[str]) -> dict[str, int]:
    """Sizes of these notes (a note gone since it was listed is left out)."""
    found = {}
    base = f"{root}{os.sep}"
    for rel in rels:
        try:
            found[rel] = os.stat(base + rel).st_size
        except OSError:
            pass
    return found


def rarity_order(root: Path, sampled: Mapping[str, int], query: T.Query) -> list[int]:
    """Term indexes, the term in the fewest sampled notes (text or file name) first; ties
    go to the longer term."""
    terms = query.terms
    if len(terms) == 1:
        return [0]
    return _rarest_first(terms, _sample_hits(root, sampled, terms))


def _rarest_first(terms: Sequence[str], seen: list[int]) -> list[int]:
    return sorted(range(len(terms)), key=lambda i: (seen[i], -len(terms[i]), i))


def common_terms(
    root: Path, sampled: Mapping[str, int], query: T.Query, terms: list[int]
) -> set[int]:
    """Those of ``terms`` in at least COMMON_SHARE of the sampled notes."""
    if not terms or not sampled:
        return set()
    return _common(
        terms, _sample_hits(root, sampled, [query.terms[i] for i in terms]), len(sampled)
    )


def _common(terms: list[int], seen: list[int], sampled: int) -> set[int]:
    if not sampled:  # nothing sampled: nothing known to be common
        return set()
    return {term for term, hits in zip(terms, seen, strict=True) if hits >= COMMON_SHARE * sampled}


def _sample_hits(root: Path, sampled: Mapping[str, int], terms: Sequence[str]) -> list[int]:
    """For each term, in how many of the sampled notes (text or file name) it may occur."""
    filters = [T.Prefilter(T.Query(t, (t,))) for t in terms]
    seen = [0] * len(terms)
    base = f"{root}{os.sep}"
    for rel, size in sampled.items():
        data = read_bytes(base + rel, min(size, SAMPLE_BYTES), SAMPLE_BYTES)
        if data is None:
            continue
        data = _stem(rel).encode("utf-8", "surrogateescape") + b"\n" + data
        for index, prefilter in enumerate(filters):
            seen[index] += prefilter.may_match(data)
    return seen


def _stem(rel: str) -> str:
    """A note's file name without .md: the part of its path that a search matches."""
    return rel[:-3].rpartition("/")[2]


def name_hits(names: list[str], term: str, pattern: re.Pattern[str]) -> set[int]:
    """Indexes of the file names (without .md) where ``term`` (``pattern``) matches: a
    byte prefilter, then one regex pass over all names joined by newlines, each hit
    confirmed on its own name (a match may run across a newline; the names it touches
    are checked one by one)."""
    joined = "\n".join(names)
    if not T.Prefilter(T.Query("", (term,))).may_match(joined.encode("utf-8", "surrogateescape")):
        return set()  # the usual case, at C speed
    starts = []
    pos = 0
    for name in names:
        starts.append(pos)
        pos += len(name) + 1
    found: set[int] = set()
    for match in pattern.finditer(joined):
        first = bisect.bisect_right(starts, match.start()) - 1
        last = bisect.bisect_right(starts, max(match.start(), match.end() - 1)) - 1
        for index in range(first, last + 1):
            if index not in found and pattern.search(names[index]):
                found.add(index)
    return found


def _link_counts(root: Path, links: list[str], patterns: list[re.Pattern[str]]) -> dict:  # type: ignore[type-arg]
    """Matches of each term in the symlinked notes (rg does not follow links)."""
    counts = {}
    for rel in links:
        text = read_text(root / rel, MAX_CHARS * 4)
        text = "" if text is None else text[:MAX_CHARS]
        counts[rel] = [min(20, len(p.findall(text))) for p in patterns]
    return counts


def _count_in_python(
    root: Path,
    candidates: list[str],
    terms: list[int],
    patterns: list[re.Pattern[str]],
    found: dict[str, list[int]],
    on_name: dict[int, set[str]],
) -> None:
    """The other terms, counted by reading the few notes that hold the first one (cheaper
    than starting rg); notes missing a term are dropped from ``found``."""
    for term in terms:
        on_name[term] = set()
    for rel in candidates:
        text = read_text(root / rel, MAX_CHARS * 4)
        stem = _stem(rel)
        if text is None:
            del found[rel]
            continue
        text = text[:MAX_CHARS]
        counts = found[rel]
        for term in terms:
            pattern = patterns[term]
            count = sum(1 for _ in itertools.islice(pattern.finditer(text), 20))
            if pattern.search(stem):
                on_name[term].add(rel)
            elif not count:
                del found[rel]
                break
            counts[term] = count


def _count_with_rg(
    rg: str,
    root: Path,
    candidates: list[str],
    terms: list[int],
    query: T.Query,
    patterns: list[re.Pattern[str]],
    linked: dict,  # type: ignore[type-arg]
    found: dict[str, list[int]],
    on_name: dict[int, set[str]],
) -> bool:
    """The other terms, counted by rg in the notes that hold the first one (one run per
    term, side by side); notes missing a term are dropped from ``found``. False if rg
    failed."""
    plain = [rel for rel in candidates if rel not in linked]
    runs = [(t, rgscan.start(rg, str(root), query.terms[t], plain)) for t in terms]
    stems = [_stem(rel) for rel in candidates]
    try:
        for term, run in runs:
            got = run.result()
            if got is None:
                return False
            hits = name_hits(stems, query.terms[term], patterns[term])
            on_name[term] = {candidates[i] for i in hits}
            for index, rel in enumerate(candidates):
                counts = found.get(rel)
                if counts is None:
                    continue
                row = linked.get(rel)
                count = row[term] if row is not None else got.get(rel, 0)
                if count or index in hits:
                    counts[term] = count
                else:
                    del found[rel]
    finally:
        for _term, run in runs:
            run.cancel()
    return True


def rank(
    rg: str,
    root: Path,
    names: list[str],
    links: list[str],
    query: T.Query,
    sampled: Mapping[str, int],
    average: float,
    first: tuple[list[int], rgscan.Pending] | None = None,
    known_sizes: Mapping[str, int] | None = None,
) -> list[str] | None:
    """The notes that may hold every term, best first; None if rg failed. ``sampled``:
    the sizes of a sample of notes; ``average``: the mean note size; ``first``: the
    order of the terms and the rg run for the first one, already started."""
    terms, patterns = query.terms, query.patterns
    if first is None:  # the sample is read once, for the order and the common terms
        seen = _sample_hits(root, sampled, terms) if len(terms) > 1 else [0]
        order = _rarest_first(terms, seen)
        stage = rgscan.start(rg, str(root), terms[order[0]])
        common = _common(order[1:], [seen[i] for i in order[1:]], len(sampled))
    else:
        order, stage = first
        # what needs only the names and the sample is done while rg reads the notes
        common = common_terms(root, sampled, query, order[1:])
    counted = [term for term in order[1:] if term not in common]
    linked = _link_counts(root, links, patterns)
    stems = [rel[rel.rfind("/") + 1 : -3] for rel in names]  # _stem, inline: 10,000 calls
    on_name: dict[int, set[str]] = {}
    hits = name_hits(stems, terms[order[0]], patterns[order[0]])
    on_name[order[0]] = {names[i] for i in hits}
    listed = set(names)
    got = stage.result()
    if got is None:
        return None
    # notes rg counted (if the walk listed them), then matches in names and symlinked notes
    counts = {rel: count for rel, count in got.items() if rel in listed}
    counts.update((rel, row[order[0]]) for rel, row in linked.items())
    counts.update((rel, counts.get(rel, 0)) for rel in on_name[order[0]])
    found: dict[str, list[int]] = {}
    for rel, count in counts.items():
        if count or rel in on_name[order[0]]:
            found[rel] = [0] * len(terms)
            found[rel][order[0]] = count
    if common and found:  # not counted, but a match in a note's name still ranks it up
        candidates = list(found)
        stems = [_stem(rel) for rel in candidates]
        for term in common:
            hits = name_hits(stems, terms[term], patterns[term])
            on_name[term] = {candidates[i] for i in hits}
    note_sizes = known_sizes
    if counted and found:
        candidates = sorted(found)
        note_sizes = known_sizes if known_sizes is not None else sizes(root, candidates)
        if sum(note_sizes.get(rel, 0) for rel in candidates) <= PYTHON_STAGE_BYTES:
            _count_in_python(root, candidates, counted, patterns, found, on_name)
        elif not _count_with_rg(
            rg, root, candidates, counted, query, patterns, linked, found, on_name
        ):
            return None
    if note_sizes is None:
        note_sizes = sizes(root, list(found))
    titles = dict.fromkeys(found, 0.0)
    for rels in on_name.values():
        for rel in rels:
            if rel in titles:
                titles[rel] += 10.0
    log = [math.log1p(c) for c in range(21)]
    scored: list[tuple[float, str]] = []
    for rel, counts in found.items():
        length = 0.5 + 0.5 * note_sizes.get(rel, average) / average
        score = titles[rel] + sum(log[min(c, 20)] for c in counts) / length
        scored.append((-score, rel))
    scored.sort()
    return [rel for _score, rel in scored]
