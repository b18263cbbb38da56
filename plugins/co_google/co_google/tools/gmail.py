"""Gmail tools: list, search and read mail and threads, attachments, labels; create drafts
(Co never sends mail)."""

from __future__ import annotations

import base64
import html
import re
from html.parser import HTMLParser
from typing import Any

from co_core import ModelRetry, ToolContext, ToolResult
from co_google import labels
from co_google import recipients as R
from co_google.auth import GoogleAuthProblem
from co_google.services import GoogleApiError
from co_google.tools._call import call, call_many, cap, services

MAX_LIMIT = 50
ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
SHOWN_HEADERS = ["From", "To", "Cc", "Date", "Subject"]
LIST_HEADERS = ["From", "Subject", "Date"]
TEXT_TYPES = {
    "application/json",
    "application/xml",
    "application/x-yaml",
    "application/yaml",
    "application/csv",
    "application/x-sh",
    "application/sql",
    "application/ics",
}
TEXT_EXTENSIONS = {".txt", ".md", ".csv", ".json", ".xml", ".yaml", ".yml", ".ics", ".log", ".html"}
DRAFT_LINK = "https://mail.google.com/mail/u/0/#drafts?compose={}"


def _headers(payload: dict[str, Any]) -> dict[str, str]:
    return {h["name"].lower(): h.get("value", "") for h in payload.get("headers", [])}


def _check_limit(limit: int) -> int:
    if limit < 1 or limit > MAX_LIMIT:
        raise ModelRetry(f"limit must be between 1 and {MAX_LIMIT}.")
    return limit


def _check_id(email_id: str) -> str:
    email_id = email_id.strip()
    if not ID_RE.match(email_id):
        raise ModelRetry(
            f"{email_id!r} is not a Gmail message id; use an id from list_emails or search_emails."
        )
    return email_id


def _label(ctx: ToolContext, label: str) -> dict[str, str]:
    """The label called ``label`` (``{"id", "name"}``); a retry naming those that exist."""
    try:
        return labels.find(services(ctx), label)
    except labels.UnknownLabel as exc:
        raise ModelRetry(str(exc)) from exc
    except (GoogleApiError, GoogleAuthProblem) as exc:
        raise ModelRetry(str(exc)) from exc


def _label_id(ctx: ToolContext, label: str) -> str:
    return _label(ctx, label)["id"]


def _listing(ctx: ToolContext, what: str, **params: Any) -> ToolResult:
    response = call(ctx, "gmail", lambda g: g.users().messages().list(userId="me", **params))
    refs = response.get("messages", [])
    if not refs:
        return ToolResult.empty(f"No emails {what}.")

    found = call_many(
        ctx,
        "gmail",
        lambda g: [
            g.users()
            .messages()
            .get(userId="me", id=ref["id"], format="metadata", metadataHeaders=LIST_HEADERS)
            for ref in refs
        ],
    )
    # An email deleted between the listing and the batch is left out.
    pairs = [(ref, message) for ref, message in zip(refs, found, strict=True) if message]
    refs = [ref for ref, _message in pairs]
    lines = []
    for number, (ref, message) in enumerate(pairs, start=1):
        head = _headers(message.get("payload", {}))
        unread = " [unread]" if "UNREAD" in message.get("labelIds", []) else ""
        lines.append(
            f"{number}. {head.get('subject') or '(no subject)'}{unread}\n"
            f"   from {head.get('from', '?')} · {head.get('date', '')} · id: {ref['id']}"
        )
        if message.get("snippet"):
            lines.append(f"   {html.unescape(message['snippet'])}")
    more = bool(response.get("nextPageToken"))
    if more:
        lines.append("More emails exist: narrow the search or raise the limit.")
    return ToolResult(
        display="\n".join(lines),
        count=len(refs),
        has_more=more,
        data={"ids": [ref["id"] for ref in refs]},
    )


def list_emails(ctx: ToolContext, label: str = "INBOX", limit: int = 10) -> ToolResult:
    """List the newest emails in Gmail (inbox, unread, sent...).

    Args:
        label: INBOX, UNREAD, SENT, STARRED or a label.
        limit: 1 to 50.
    """
    limit = _check_limit(limit)
    label_id = _label_id(ctx, label)
    return _listing(ctx, f"under {label}", labelIds=[label_id], maxResults=limit)


def search_emails(ctx: ToolContext, query: str, limit: int = 10) -> ToolResult:
    """Search emails in Gmail.

    Args:
        query: e.g. from:alice newer_than:7d.
        limit: 1 to 50.
    """
    query = query.strip()
    if not query:
        raise ModelRetry(
            "query is empty: pass a Gmail search such as 'from:alice subject:invoice'."
        )
    limit = _check_limit(limit)
    return _listing(ctx, f"match {query!r}", q=query, maxResults=limit)


def _decode(data: str, charset: str = "utf-8") -> str:
    raw = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
    try:
        return raw.decode(charset, "replace")
    except LookupError:
        return raw.decode("utf-8", "replace")


def _charset(part: dict[str, Any]) -> str:
    found = re.search(r"charset=\"?([\w.-]+)", _headers(part).get("content-type", ""), re.I)
    return found.group(1) if found else "utf-8"


def _walk(part: dict[str, Any]) -> list[dict[str, Any]]:
    found = [part]
    for child in part.get("parts", []) or []:
        found += _walk(child)
    return found


class _Text(HTMLParser):
    """HTML mail to readable text: drop tags, scripts and styles; keep line breaks."""

    BREAKS = {"br", "p", "div", "tr", "li", "h1", "h2", "h3", "h4", "table"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style"):
            self.skip += 1
        elif tag in self.BREAKS:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.out.append(data)


def html_to_text(markup: str) -> str:
    parser = _Text()
    parser.feed(markup)
    text = "".join(parser.out)
    return re.sub(r"\n\s*\n+", "\n\n", re.sub(r"[ \t]+", " ", text)).strip()


def _attachments(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [part for part in _walk(payload) if part.get("filename")]


def body_text(payload: dict[str, Any]) -> tuple[str, list[str]]:
    """The body (text/plain preferred over HTML) and attachment descriptions."""
    plain, rich = [], []
    for part in _walk(payload):
        mime = part.get("mimeType", "")
        body = part.get("body", {}) or {}
        if part.get("filename"):
            continue
        if body.get("data") and mime == "text/plain":
            plain.append(_decode(body["data"], _charset(part)))
        elif body.get("data") and mime == "text/html":
            rich.append(html_to_text(_decode(body["data"], _charset(part))))
    attachments = [
        f"{number}. {part['filename']} ({part.get('mimeType', '')}, "
        f"{(part.get('body') or {}).get('size', 0)} bytes)"
        for number, part in enumerate(_attachments(payload), start=1)
    ]
    text = "\n".join(plain) if plain else "\n".join(rich)
    return text.strip(), attachments


def _message_text(message: dict[str, Any], limit: int) -> str:
    payload = message.get("payload", {})
    head = _headers(payload)
    lines = [f"{name}: {head[name.lower()]}" for name in SHOWN_HEADERS if head.get(name.lower())]
    text, attachments = body_text(payload)
    if attachments:
        lines.append("Attachments: " + "; ".join(attachments))
    return "\n".join(lines) + "\n\n" + (cap(text, limit) if text else "(no text body)")


def _not_found(email_id: str) -> str:
    return f"No email has id {email_id!r}; use an id from list_emails or search_emails."


def read_email(ctx: ToolContext, email_id: str, thread: bool = False) -> str:
    """Read an email: headers, body, attachment names.

    Args:
        email_id: from list_emails or search_emails.
        thread: true: the whole conversation.
    """
    email_id = _check_id(email_id)
    limit = services(ctx).section.max_chars
    if not thread:
        message = call(
            ctx,
            "gmail",
            lambda g: g.users().messages().get(userId="me", id=email_id, format="full"),
            not_found=_not_found(email_id),
        )
        return _message_text(message, limit)
    thread_id, _subject = _thread_of(ctx, email_id)
    found = call(
        ctx,
        "gmail",
        lambda g: g.users().threads().get(userId="me", id=thread_id, format="full"),
        not_found=_not_found(email_id),
    )
    messages = found.get("messages", [])
    each = max(500, limit // max(1, len(messages)))
    parts = [
        f"── {number} of {len(messages)} · id: {message.get('id')}\n" + _message_text(message, each)
        for number, message in enumerate(messages, start=1)
    ]
    return f"Conversation of {len(messages)} emails, oldest first.\n\n" + "\n\n".join(parts)


def _thread_of(ctx: ToolContext, email_id: str) -> tuple[str, str]:
    """The thread id and subject of an email."""
    message = call(
        ctx,
        "gmail",
        lambda g: (
            g.users()
            .messages()
            .get(userId="me", id=email_id, format="metadata", metadataHeaders=["Subject"])
        ),
        not_found=_not_found(email_id),
    )
    return str(message.get("threadId", email_id)), _headers(message.get("payload", {})).get(
        "subject", ""
    )


def _is_text(mime: str, name: str) -> bool:
    suffix = name[name.rfind(".") :].lower() if "." in name else ""
    return mime.startswith("text/") or mime in TEXT_TYPES or suffix in TEXT_EXTENSIONS


def read_email_attachment(ctx: ToolContext, email_id: str, attachment: str) -> str:
    """Read a text attachment of an email.

    Args:
        attachment: its name or number.
    """
    email_id = _check_id(email_id)
    message = call(
        ctx,
        "gmail",
        lambda g: g.users().messages().get(userId="me", id=email_id, format="full"),
        not_found=_not_found(email_id),
    )
    parts = _attachments(message.get("payload", {}))
    if not parts:
        raise ModelRetry(f"Email {email_id!r} has no attachments.")
    wanted = attachment.strip()
    names = [part["filename"] for part in parts]
    if wanted.isdigit() and 1 <= int(wanted) <= len(parts):
        part = parts[int(wanted) - 1]
    else:
        exact = [p for p in parts if p["filename"].lower() == wanted.lower()]
        loose = [p for p in parts if wanted.lower() and wanted.lower() in p["filename"].lower()]
        if not (exact or len(loose) == 1):
            raise ModelRetry(f"No attachment {attachment!r}; this email has: {', '.join(names)}")
        part = (exact or loose)[0]
    name, mime = part["filename"], part.get("mimeType", "")
    body = part.get("body") or {}
    if not _is_text(mime, name):
        return (
            f"[{name} is {mime or 'a file'} ({body.get('size', 0)} bytes): Co cannot show "
            "it as text; the user can open it in Gmail.]"
        )
    data = body.get("data")
    if not data:
        att_id = body.get("attachmentId", "")
        data = call(
            ctx,
            "gmail",
            lambda g: (
                g.users().messages().attachments().get(userId="me", messageId=email_id, id=att_id)
            ),
        ).get("data", "")
    text = _decode(data, _charset(part))
    if mime == "text/html" or name.lower().endswith(".html"):
        text = html_to_text(text)
    return f"# {name} ({mime})\n\n" + cap(text, services(ctx).section.max_chars)


def draft_email(
    ctx: ToolContext,
    body: str,
    to: str = "",
    subject: str = "",
    cc: str = "",
    bcc: str = "",
    reply_to_id: str = "",
    reply_all: bool = False,
) -> str:
    """Write a Gmail draft for the user to send (never sent).

    Args:
        to: addresses, comma-separated.
        reply_to_id: id of the email to answer.
        reply_all: answer everyone too.
    """
    google = services(ctx)
    reply_to_id = _check_id(reply_to_id) if reply_to_id.strip() else ""
    args = {
        "to": to,
        "cc": cc,
        "bcc": bcc,
        "subject": subject,
        "reply_to_id": reply_to_id,
        "reply_all": reply_all,
    }
    try:
        draft = R.plan(google, args)
        if not draft.to:
            raise ModelRetry("`to` is empty: give the recipients' email addresses.")
        if not reply_to_id and not draft.subject:
            raise ModelRetry("subject is empty: a new email needs a subject.")
        raw = R.check(draft, body)  # the bytes whose recipients were read back
    except R.BadDraft as exc:
        raise ModelRetry(str(exc)) from exc
    except GoogleApiError as exc:
        if exc.kind == "not_found":
            raise ModelRetry(f"No email has id {reply_to_id!r} to reply to.") from exc
        raise ModelRetry(str(exc)) from exc
    except GoogleAuthProblem as exc:
        raise ModelRetry(str(exc)) from exc
    request: dict[str, Any] = {"raw": base64.urlsafe_b64encode(raw).decode("ascii")}
    if draft.thread_id:
        request["threadId"] = draft.thread_id
    created = call(
        ctx,
        "gmail",
        lambda g: g.users().drafts().create(userId="me", body={"message": request}),
    )
    message_id = created.get("message", {}).get("id", created.get("id", ""))
    copies = "".join(
        f", {label} {_shown(recipients)}"
        for label, recipients in (("cc", draft.cc), ("bcc", draft.bcc))
        if recipients
    )
    return (
        f"Draft created (not sent) to {_shown(draft.to)}{copies}: {draft.subject!r}. "
        f"Review and send it in Gmail: {DRAFT_LINK.format(message_id)}"
    )


def _shown(recipients: tuple[R.Recipient, ...]) -> str:
    return ", ".join(r.header() for r in recipients)


def label_email(
    ctx: ToolContext, email_id: str, add: str = "", remove: str = "", archive: bool = False
) -> str:
    """Label or archive an email's conversation.

    Args:
        add: labels, comma-separated.
        remove: labels, comma-separated.
        archive: true: out of the inbox.
    """
    email_id = _check_id(email_id)
    found = {name: _label(ctx, name) for name in labels.split(add) + labels.split(remove)}
    added = [found[name]["id"] for name in labels.split(add)]
    removed = [found[name]["id"] for name in labels.split(remove)] + (["INBOX"] if archive else [])
    if not added and not removed:
        raise ModelRetry("Nothing to change: give labels to add or remove, or archive=true.")
    thread_id, subject = _thread_of(ctx, email_id)
    body = {"addLabelIds": added, "removeLabelIds": list(dict.fromkeys(removed))}
    changed = call(
        ctx,
        "gmail",
        lambda g: g.users().threads().modify(userId="me", id=thread_id, body=body),
    )
    count = len(changed.get("messages", [])) or 1
    names = {item["id"]: item["name"] for item in found.values()}
    done = [f"added {', '.join(names.get(i, i) for i in added)}"] if added else []
    if archive:
        done.append("archived it")
    others = [i for i in removed if i != "INBOX" or not archive]
    if others:
        done.append(f"removed {', '.join(names.get(i, i) for i in others)}")
    noun = "email" if count == 1 else "emails"
    return f"Conversation {subject!r} ({count} {noun}): " + "; ".join(done) + "."
