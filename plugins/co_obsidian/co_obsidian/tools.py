"""The tools the model uses on the vault. Listing and searching return ToolResult.

Mistakes the model can fix (no vault configured, a name that is not a note, a path
outside the vault) raise ModelRetry with what to do instead; a search that finds nothing
is a normal result with ``count=0``.
"""

from __future__ import annotations

from pathlib import Path

from co_core import ModelRetry, ToolContext, ToolResult
from co_obsidian import text as T
from co_obsidian.index import VaultIndex
from co_obsidian.keys import VAULT
from co_obsidian.links import Resolved, control_character, resolve, resolve_part
from co_obsidian.parse import normalize_tag
from co_obsidian.targets import readable
from co_obsidian.vault import VaultError, read_text, resolve_inside

MAX_SEARCH_LIMIT = 50
LIST_PAGE = 50
MAX_READ_CHARS = 60_000


def _index(ctx: ToolContext) -> VaultIndex:
    try:
        return ctx.deps.resource(VAULT).index()
    except VaultError as exc:
        raise ModelRetry(str(exc)) from exc


def _no_controls(what: str, text: str, spaces_ok: bool = False) -> None:
    """A NUL or another control character is a mistake the model can fix, not a crash."""
    bad = control_character("".join(c for c in text if not c.isspace()) if spaces_ok else text)
    if bad is not None:
        raise ModelRetry(f"{what} {text!r} holds a control character ({bad}); leave it out.")


def _page(page: int) -> int:
    if page < 1:
        raise ModelRetry("page starts at 1")
    return page


def _resolved(index: VaultIndex, name: str, for_create: bool = False) -> Resolved:
    try:
        found = resolve(index, name, for_create=for_create)
    except VaultError as exc:
        raise ModelRetry(str(exc)) from exc
    if found.path is None:
        raise ModelRetry(found.problem or f"{name!r} is not a note name.")
    return found


def locate(index: VaultIndex, name: str) -> tuple[str, Path, str]:
    """An existing note's canonical vault-relative path, its real path, and the heading
    or block after ``#`` in the name (or ""), from what the model typed (see
    :func:`co_obsidian.links.resolve_part`). ModelRetry when it is outside the vault,
    not a note, ambiguous or unknown."""
    try:
        found, subpath = resolve_part(index, name)
    except VaultError as exc:
        raise ModelRetry(str(exc)) from exc
    if found.path is None:
        raise ModelRetry(found.problem or f"{name!r} is not a note name.")
    if not found.exists:
        raise ModelRetry(
            f"No note named {name!r}. Use search_notes or list_notes to find the right name."
        )
    return found.path, index.root / found.path, subpath


def search_notes(ctx: ToolContext, query: str, limit: int = 10, page: int = 1) -> ToolResult:
    """Search the Obsidian notes for words (all must occur; "exact phrase" in quotes)."""
    _no_controls("query", query, spaces_ok=True)
    parsed = T.parse_query(query)
    if not parsed.terms:
        raise ModelRetry('query is empty: give words to search for, e.g. "budget 2024"')
    limit = max(1, min(int(limit), MAX_SEARCH_LIMIT))
    page = _page(page)
    index = _index(ctx)
    try:
        hits, more = index.search(parsed, (page - 1) * limit, limit, readable(ctx.deps))
    except VaultError as exc:
        raise ModelRetry(str(exc)) from exc
    if not hits and page == 1:
        return _near_misses(index, parsed, query, limit, ctx)
    if not hits:
        return ToolResult.empty(f"No notes match {query!r} on page {page}.")
    first = (page - 1) * limit + 1
    lines = [f"Notes matching {query!r} ({first}–{first + len(hits) - 1}):"]
    patterns = parsed.patterns
    for number, hit in enumerate(hits, first):
        lines.append(f"{number}. {hit.path}")
        lines.append(f"   {T.snippet(hit.text, patterns)}")
    if more:
        lines.append(f"More results: page={page + 1}")
    return ToolResult(
        "\n".join(lines),
        count=len(hits),
        has_more=more,
        next_page=page + 1 if more else None,
        data={"paths": [h.path for h in hits]},
    )


def _near_misses(
    index: VaultIndex, parsed: T.Query, query: str, limit: int, ctx: ToolContext
) -> ToolResult:
    """No note holds every word: the notes that hold some of them, or words like them
    (co_obsidian.nearby), listed apart; the count stays 0."""
    from co_obsidian.nearby import nearby

    try:
        near = nearby(index, parsed, limit, readable(ctx.deps))
    except VaultError as exc:
        raise ModelRetry(str(exc)) from exc
    said = f"No notes match {query!r}."
    if not near:
        return ToolResult.empty(said)
    lines = [f"{said} Notes with some of its words, or words like them:"]
    for number, note in enumerate(near, 1):
        lines.append(f"{number}. {note.path}")
        lines.append(f"   {T.snippet(note.text, [T.term_pattern(f) for f in note.found])}")
    return ToolResult("\n".join(lines), count=0, data={"paths": [], "near": [n.path for n in near]})


def list_notes(
    ctx: ToolContext, tag: str | None = None, folder: str | None = None, page: int = 1
) -> ToolResult:
    """List Obsidian notes, by tag and/or folder (50 per page)."""
    page = _page(page)
    for what, value in (("tag", tag), ("folder", folder)):
        if value:
            _no_controls(what, value)
    index = _index(ctx)
    tag_key = normalize_tag(tag) if tag else None
    folder_rel = None
    if folder and folder.strip().strip("/"):
        try:
            folder_rel = index.folder(folder.strip().strip("/"))
        except VaultError as exc:
            raise ModelRetry(str(exc)) from exc
        if folder_rel is None:
            return ToolResult.empty(f"No folder {folder!r} in the vault.")
        folder_rel = folder_rel or None
    try:
        rows, total = index.notes(
            tag_key, folder_rel, (page - 1) * LIST_PAGE, LIST_PAGE, readable(ctx.deps)
        )
    except VaultError as exc:
        raise ModelRetry(str(exc)) from exc
    what = " ".join(
        part
        for part in (
            f"tagged #{tag_key}" if tag_key else "",
            f"in {folder_rel}/" if folder_rel else "",
        )
        if part
    )
    if not rows:
        return ToolResult.empty(f"No notes{' ' + what if what else ''}.")
    first = (page - 1) * LIST_PAGE + 1
    lines = [f"{total} notes{' ' + what if what else ''} ({first}–{first + len(rows) - 1}):"]
    lines += [f"- {path}" + (f"  [{tags}]" if tags else "") for path, tags in rows]
    more = first - 1 + len(rows) < total
    if more:
        lines.append(f"More: page={page + 1}")
    return ToolResult(
        "\n".join(lines), count=total, has_more=more, next_page=page + 1 if more else None
    )


def read_note(ctx: ToolContext, name: str, whole: bool = False) -> str:
    """Read an Obsidian note by path or title; Note#Heading or Note#^block reads only
    that part (whole=True: all)."""
    index = _index(ctx)
    rel, path, subpath = locate(index, name)
    text = read_text(path)
    if text is None:
        raise ModelRetry(f"{rel} cannot be read as text.")
    if subpath and not whole:
        return _part(rel, text, subpath)
    if len(text) > MAX_READ_CHARS:
        return (
            f"{text[:MAX_READ_CHARS]}\n\n[{rel}: showing the first {MAX_READ_CHARS:,} of "
            f"{len(text):,} characters; use search_notes to find a later part]"
        )
    return text


def _part(rel: str, text: str, subpath: str) -> str:
    """The section or block ``subpath`` names, headed by a line saying which it is."""
    from co_obsidian.parse import parse_note
    from co_obsidian.sections import NoSuchPart, find

    try:
        part = find(text, parse_note(text, rel), subpath)
    except NoSuchPart as exc:
        raise ModelRetry(
            f"{rel} has {exc}. Read the whole note with read_note({rel!r}, whole=True)."
        ) from exc
    what = (
        f"section {part.label!r}" if part.kind == "heading" else f"block {part.label} ({part.kind})"
    )
    lines = f"lines {part.start + 1}–{part.end}"
    body = part.text
    if len(body) > MAX_READ_CHARS:
        body = f"{body[:MAX_READ_CHARS]}\n[showing the first {MAX_READ_CHARS:,} characters]\n"
    return (
        f"[{rel}, {what}, {lines} of {part.total}; "
        f"the whole note: read_note({rel!r}, whole=True)]\n{body}"
    )


def note_links(ctx: ToolContext, name: str) -> ToolResult:
    """The links of an Obsidian note, and the notes linking to it."""
    index = _index(ctx)
    rel, _path, _subpath = locate(index, name)
    try:
        outgoing, back = index.links(rel, readable(ctx.deps))
    except VaultError as exc:
        raise ModelRetry(str(exc)) from exc
    lines = [f"Links from {rel}:"]
    for link in outgoing:
        if link.target is None:
            lines.append(f"- {link.raw} → (no such note yet)")
        elif link.kind == "note":
            lines.append(f"- {link.raw} → {link.target}")
        else:
            lines.append(f"- {link.raw} → {link.target} ({link.kind})")
    if not outgoing:
        lines.append("- none")
    lines.append(f"Backlinks to {rel}:")
    lines += [f"- {p}" for p in back] or ["- none"]
    notes = [link.target for link in outgoing if link.kind in ("note", "embed")]
    return ToolResult(
        "\n".join(lines),
        count=len(outgoing) + len(back),
        data={
            "outgoing": list(dict.fromkeys(notes)),
            "attachments": list(
                dict.fromkeys(link.target for link in outgoing if link.kind == "attachment")
            ),
            "backlinks": back,
        },
    )


def create_note(ctx: ToolContext, name: str, content: str) -> str:
    """Create a new Obsidian note (folder/Title) with markdown text."""
    index = _index(ctx)
    found = _resolved(index, name, for_create=True)
    rel = found.path
    assert rel is not None
    target = index.root / rel
    if found.exists or target.exists():
        raise ModelRetry(f"{rel} already exists. Use append_to_note to add to it.")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # mkdir may have followed nothing new, but check the real parent once more
        resolve_inside(index.root, str(target.parent))
    except (OSError, VaultError) as exc:
        raise ModelRetry(f"Cannot create {rel}: {exc}") from exc
    ctx.deps.changes.before_write(target)
    target.write_text(content if content.endswith("\n") else content + "\n", encoding="utf-8")
    index.note_changed(target)
    return f"Created {rel} ({len(content):,} characters)."


def append_to_note(ctx: ToolContext, name: str, content: str) -> str:
    """Append markdown to the end of an existing Obsidian note."""
    index = _index(ctx)
    found = _resolved(index, name)
    if not found.exists or found.path is None:
        raise ModelRetry(
            f"No note named {name!r}. Use search_notes or list_notes to find the right name."
        )
    rel, target = found.path, index.root / found.path
    current = read_text(target)
    if current is None:
        raise ModelRetry(f"{rel} is not a text note; not appending.")
    ctx.deps.changes.before_write(target)
    addition = ("" if not current or current.endswith("\n") else "\n") + content
    if not addition.endswith("\n"):
        addition += "\n"
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(addition)
    index.note_changed(target)
    return f"Appended {len(content):,} characters to {rel}."
