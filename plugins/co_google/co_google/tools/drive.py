"""Drive tools: search by text (paged) and read a file as text.

Audited against the Drive v3 reference: a search covers every drive the user can reach
(``corpora=allDrives``) and says when Drive could not search them all
(``incompleteSearch``); an export over Drive's 10 MB limit is explained, with links to
download the file, instead of failing as a bare 403; a Sheet is read tab by tab (its CSV
export holds the first tab only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from co_core import ModelRetry, ToolContext, ToolResult
from co_google.tools._call import call, cap, services

PAGE_SIZE = 10
FILE_FIELDS = "id, name, mimeType, size, modifiedTime, webViewLink"
READ_FIELDS = FILE_FIELDS + ", exportLinks"
ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,200}$")
# Google formats we export, and as what (Docs as Markdown, falling back to plain text).
DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
ODS = "application/vnd.oasis.opendocument.spreadsheet"
EXPORTS = {
    DOC: ["text/markdown", "text/plain"],
    SHEET: [ODS, "text/csv"],  # every tab; else the first tab only
    "application/vnd.google-apps.presentation": ["text/plain"],
}
# What a file too large to export can still be downloaded as, from its exportLinks.
DOWNLOADS = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PowerPoint",
    "application/pdf": "PDF",
    "text/plain": "text",
    "text/csv": "CSV (first tab)",
}
TEXT_TYPES = {
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-yaml",
    "application/yaml",
    "application/x-sh",
    "application/sql",
    "application/csv",
}
KINDS = {
    "application/vnd.google-apps.document": "Google Doc",
    "application/vnd.google-apps.spreadsheet": "Google Sheet",
    "application/vnd.google-apps.presentation": "Google Slides",
    "application/vnd.google-apps.folder": "folder",
    "application/pdf": "PDF",
}


def drive_query(text: str) -> str:
    """Free text as a Drive ``q``: quotes and backslashes escaped so text stays text."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'")
    return f"fullText contains '{escaped}' and trashed = false"


def _kind(mime: str) -> str:
    return KINDS.get(mime, mime)


def search_drive(ctx: ToolContext, query: str, page: int = 1) -> ToolResult:
    """Search Google Drive files (documents, sheets) by name or content.

    Args:
        query: words to look for.
        page: 2, 3, ... while has_more.
    """
    query = query.strip()
    if not query:
        raise ModelRetry("query is empty: pass the words to search Drive for.")
    if page < 1:
        raise ModelRetry("page starts at 1.")
    google = services(ctx)
    token = None
    if page > 1:
        token = google.page_tokens.get((query, page))
        if token is None:
            raise ModelRetry(
                f"Page {page} of {query!r} is not available. Search from page 1 first and ask "
                "for the next page only while has_more is true."
            )
    response = call(
        ctx,
        "drive",
        lambda drive: drive.files().list(
            q=drive_query(query),
            pageSize=PAGE_SIZE,
            pageToken=token,
            fields=f"nextPageToken, incompleteSearch, files({FILE_FIELDS})",
            # The default corpus, "user", holds only files created by, opened by or
            # shared directly with the user: a shared drive's other files need allDrives.
            corpora="allDrives",
            supportsAllDrives=True,
            includeItemsFromAllDrives=True,
        ),
    )
    files = response.get("files", [])
    # "If true, then some search results might be missing, since all documents were not
    # searched" (FileList.incompleteSearch).
    incomplete = bool(response.get("incompleteSearch"))
    partly = (
        "Drive could not search every shared drive this time, so some matching files "
        "may be missing: narrow the words, or search again."
    )
    if not files:
        return ToolResult.empty(
            f"No Drive files match {query!r}." + (f" {partly}" if incomplete else "")
        )
    first = (page - 1) * PAGE_SIZE
    lines = []
    for number, item in enumerate(files, start=first + 1):
        modified = (item.get("modifiedTime") or "")[:10]
        lines.append(
            f"{number}. {item.get('name', '(untitled)')} ({_kind(item.get('mimeType', ''))}"
            + (f", modified {modified}" if modified else "")
            + f") id: {item['id']}"
        )
        if item.get("webViewLink"):
            lines.append(f"   {item['webViewLink']}")
    next_token = response.get("nextPageToken")
    if next_token:
        google.page_tokens[(query, page + 1)] = next_token
        lines.append(f"More results: call search_drive with page={page + 1}.")
    if incomplete:
        lines.append(partly)
    return ToolResult(
        display="\n".join(lines),
        count=len(files),
        has_more=bool(next_token) or incomplete,
        next_page=page + 1 if next_token else None,
        data={"files": [{"id": f["id"], "name": f.get("name")} for f in files]},
    )


def _is_text(mime: str) -> bool:
    return mime.startswith("text/") or mime in TEXT_TYPES


@dataclass
class Export:
    data: bytes | None  # None: no format could be exported
    format: str = ""
    too_large: list[str] = field(default_factory=list)  # formats over Drive's 10 MB


def _export(ctx: ToolContext, file_id: str, formats: list[str]) -> Export:
    """The file exported as the first of ``formats`` Drive offers and can export."""
    from co_google.services import GoogleApiError

    google = services(ctx)
    too_large: list[str] = []
    for fmt in formats:
        request = google.client("drive").files().export_media(fileId=file_id, mimeType=fmt)
        try:
            return Export(google.execute(request, "drive"), fmt, too_large)
        except GoogleApiError as exc:
            if exc.kind == "too_large":
                too_large.append(fmt)
            elif exc.kind != "bad_request":  # bad_request: that format is not offered
                raise ModelRetry(str(exc)) from exc
    return Export(None, "", too_large)


def _too_large(meta: dict[str, Any]) -> str:
    """What to tell the user about a file Drive will not export: where to get it."""
    links = meta.get("exportLinks") or {}
    offers = [f"{label}: {links[mime]}" for mime, label in DOWNLOADS.items() if mime in links]
    where = f"open it: {meta['webViewLink']}" if meta.get("webViewLink") else "open it in Drive"
    text = (
        f"[This {_kind(meta.get('mimeType', ''))} is larger than the 10 MB Google Drive lets "
        f"Co export as text, so Co cannot read it. The user can {where}"
    )
    if offers:
        text += "; or download it (the links need their Google sign-in): " + "; ".join(offers)
    return text + ". A smaller copy, such as one section or one tab, could be read.]"


def _sheet(data: bytes, limit: int) -> str | None:
    """Every tab of an OpenDocument export as CSV under its name; None if unreadable."""
    from co_google.spreadsheet import NotASpreadsheet, tabs

    try:
        found = tabs(data, limit)
    except NotASpreadsheet:
        return None
    names = ", ".join(tab.name for tab in found)
    parts = [f"{len(found)} tab{'s' if len(found) != 1 else ''}: {names}"]
    for tab in found:
        parts.append(f"## {tab.name}\n" + (tab.csv() or "(empty)\n"))
    text = "\n".join(parts)
    if any(tab.cut for tab in found):
        text += f"\n[… truncated: showing about the first {limit} characters of the Sheet]"
    return text


def _exported(ctx: ToolContext, file_id: str, meta: dict[str, Any], limit: int) -> str:
    """A Google Docs, Sheets or Slides file as text, saying what could not be shown."""
    mime = meta.get("mimeType", "")
    export = _export(ctx, file_id, EXPORTS[mime])
    if export.format == ODS and export.data is not None:
        sheet = _sheet(export.data, limit)
        if sheet is not None:
            return cap(sheet, limit)
        export = _export(ctx, file_id, ["text/csv"])
    if export.data is None:
        if export.too_large:
            return _too_large(meta)
        return "[Drive offers no text export of this file; open the link to view it.]"
    note = ""
    if mime == SHEET:
        note = (
            "[Only the first tab of this Sheet is shown: Drive exports a Sheet's first tab "
            "alone as CSV, and the whole Sheet could not be exported"
            + (" (over Drive's 10 MB)" if export.too_large else "")
            + ".]\n"
        )
    elif export.too_large:
        note = f"[Exported as {export.format}: the {export.too_large[0]} export is over Drive's 10 MB.]\n"
    return note + cap(export.data.decode("utf-8", "replace"), limit)


def read_drive_file(ctx: ToolContext, file_id: str) -> str:
    """Read a Google Drive file as text.

    Args:
        file_id: an id from search_drive.
    """
    file_id = file_id.strip()
    if not ID_RE.match(file_id):
        raise ModelRetry(
            f"{file_id!r} is not a Drive file id; use an id from search_drive's results."
        )
    limit = services(ctx).section.max_chars
    meta = call(
        ctx,
        "drive",
        lambda drive: drive.files().get(fileId=file_id, fields=READ_FIELDS, supportsAllDrives=True),
        not_found=f"No Drive file has id {file_id!r}; use an id from search_drive's results.",
    )
    mime = meta.get("mimeType", "")
    name = meta.get("name", file_id)
    link = meta.get("webViewLink", "")
    header = f"# {name}\n{_kind(mime)}" + (f" · {link}" if link else "") + "\n\n"
    if mime in EXPORTS:
        return header + _exported(ctx, file_id, meta, limit)
    if _is_text(mime):
        if str(meta.get("size", "")) == "0":
            # Drive answers 416 to a ranged download of a 0-byte file
            # (google-api-python-client#638): its size says there is nothing to read.
            return header + "[The file is empty.]"
        want = limit * 4  # UTF-8 needs at most 4 bytes a character

        def download(drive: Any) -> Any:
            request = drive.files().get_media(fileId=file_id, supportsAllDrives=True)
            request.headers["Range"] = f"bytes=0-{want - 1}"
            return request

        data = call(ctx, "drive", download)
        size = int(meta.get("size") or len(data))
        text = cap(data.decode("utf-8", "replace"), limit)
        if size > len(data) and "[… truncated" not in text:
            text += f"\n[… truncated: the file is {size} bytes, showing the first {len(data)}]"
        return header + text
    if mime == "application/vnd.google-apps.folder":
        return header + "[This is a folder; search_drive finds the files in it by name or text.]"
    size = meta.get("size")
    described = f"{_kind(mime)} file" + (f", {int(size):,} bytes" if size else "")
    return header + f"[{described}: Co cannot show its contents as text; open the link to view it.]"
