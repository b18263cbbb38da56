"""Drive tools: search by text (paged) and read a file as text."""

from __future__ import annotations

import re
from typing import Any

from pydantic_ai import ModelRetry, RunContext

from co_core import CoDeps, ToolResult
from co_google.tools._call import call, cap, services

PAGE_SIZE = 10
FILE_FIELDS = "id, name, mimeType, size, modifiedTime, webViewLink"
ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,200}$")
# Google formats we export, and as what (Docs as Markdown, falling back to plain text).
EXPORTS = {
    "application/vnd.google-apps.document": ["text/markdown", "text/plain"],
    "application/vnd.google-apps.spreadsheet": ["text/csv"],
    "application/vnd.google-apps.presentation": ["text/plain"],
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


def search_drive(ctx: RunContext[CoDeps], query: str, page: int = 1) -> ToolResult:
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
            fields=f"nextPageToken, files({FILE_FIELDS})",
            supportsAllDrives=True,
            includeItemsFromAllDrives=True,
        ),
    )
    files = response.get("files", [])
    if not files:
        return ToolResult.empty(f"No Drive files match {query!r}.")
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
    return ToolResult(
        display="\n".join(lines),
        count=len(files),
        has_more=bool(next_token),
        next_page=page + 1 if next_token else None,
        data={"files": [{"id": f["id"], "name": f.get("name")} for f in files]},
    )


def _is_text(mime: str) -> bool:
    return mime.startswith("text/") or mime in TEXT_TYPES


def _export(ctx: RunContext[CoDeps], file_id: str, formats: list[str]) -> bytes:
    from co_google.services import GoogleApiError

    google = services(ctx)
    for index, fmt in enumerate(formats):
        request = google.client("drive").files().export_media(fileId=file_id, mimeType=fmt)
        try:
            return google.execute(request, "drive")
        except GoogleApiError as exc:
            if exc.kind == "bad_request" and index + 1 < len(formats):
                continue  # that export format is not offered for this file; try the next
            raise ModelRetry(str(exc)) from exc
    raise AssertionError("unreachable")


def read_drive_file(ctx: RunContext[CoDeps], file_id: str) -> str:
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
        lambda drive: drive.files().get(fileId=file_id, fields=FILE_FIELDS, supportsAllDrives=True),
        not_found=f"No Drive file has id {file_id!r}; use an id from search_drive's results.",
    )
    mime = meta.get("mimeType", "")
    name = meta.get("name", file_id)
    link = meta.get("webViewLink", "")
    header = f"# {name}\n{_kind(mime)}" + (f" · {link}" if link else "") + "\n\n"
    if mime in EXPORTS:
        text = _export(ctx, file_id, EXPORTS[mime]).decode("utf-8", "replace")
        return header + cap(text, limit)
    if _is_text(mime):
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
