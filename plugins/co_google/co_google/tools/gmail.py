"""Gmail tools: list, search and read mail; create drafts (Co never sends mail)."""

from __future__ import annotations

import base64
import email.utils
import html
import re
from email.message import EmailMessage
from html.parser import HTMLParser
from typing import Any

from pydantic_ai import ModelRetry, RunContext

from co_core import ToolResult
from co_google.tools._call import call, cap, services

MAX_LIMIT = 50
ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
SYSTEM_LABELS = {
    "INBOX",
    "SENT",
    "DRAFT",
    "SPAM",
    "TRASH",
    "UNREAD",
    "STARRED",
    "IMPORTANT",
    "CHAT",
    "CATEGORY_PERSONAL",
    "CATEGORY_SOCIAL",
    "CATEGORY_PROMOTIONS",
    "CATEGORY_UPDATES",
    "CATEGORY_FORUMS",
}
SHOWN_HEADERS = ["From", "To", "Cc", "Date", "Subject"]
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


def _label_id(ctx: RunContext[Any], label: str) -> str:
    label = label.strip() or "INBOX"
    if label.upper() in SYSTEM_LABELS:
        return label.upper()
    labels = call(ctx, "gmail", lambda g: g.users().labels().list(userId="me")).get("labels", [])
    for item in labels:
        if label.lower() in (item.get("name", "").lower(), item.get("id", "").lower()):
            return item["id"]
    names = ", ".join(sorted(item.get("name", "") for item in labels)) or "none"
    raise ModelRetry(f"There is no Gmail label {label!r}. Labels: {names}")


def _listing(ctx: RunContext[Any], what: str, **params: Any) -> ToolResult:
    response = call(ctx, "gmail", lambda g: g.users().messages().list(userId="me", **params))
    refs = response.get("messages", [])
    if not refs:
        return ToolResult.empty(f"No emails {what}.")
    lines = []
    for number, ref in enumerate(refs, start=1):
        message = call(
            ctx,
            "gmail",
            lambda g, ref=ref: (
                g.users()
                .messages()
                .get(
                    userId="me",
                    id=ref["id"],
                    format="metadata",
                    metadataHeaders=["From", "Subject", "Date"],
                )
            ),
        )
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


def list_emails(ctx: RunContext[Any], label: str = "INBOX", limit: int = 10) -> ToolResult:
    """List the newest emails under a Gmail label (INBOX, UNREAD, SENT, STARRED or a user label)."""
    limit = _check_limit(limit)
    label_id = _label_id(ctx, label)
    return _listing(ctx, f"under {label}", labelIds=[label_id], maxResults=limit)


def search_emails(ctx: RunContext[Any], query: str, limit: int = 10) -> ToolResult:
    """Search Gmail with Gmail's query syntax, e.g. `from:alice has:attachment newer_than:7d`."""
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


def body_text(payload: dict[str, Any]) -> tuple[str, list[str]]:
    """The body (text/plain preferred over HTML) and attachment descriptions."""
    plain, rich, attachments = [], [], []
    for part in _walk(payload):
        mime = part.get("mimeType", "")
        body = part.get("body", {}) or {}
        if part.get("filename"):
            attachments.append(f"{part['filename']} ({mime}, {body.get('size', 0)} bytes)")
        elif body.get("data") and mime == "text/plain":
            plain.append(_decode(body["data"], _charset(part)))
        elif body.get("data") and mime == "text/html":
            rich.append(html_to_text(_decode(body["data"], _charset(part))))
    text = "\n".join(plain) if plain else "\n".join(rich)
    return text.strip(), attachments


def read_email(ctx: RunContext[Any], email_id: str) -> str:
    """Read one email by id (from list_emails or search_emails): headers and the text body."""
    email_id = _check_id(email_id)
    message = call(
        ctx,
        "gmail",
        lambda g: g.users().messages().get(userId="me", id=email_id, format="full"),
        not_found=f"No email has id {email_id!r}; use an id from list_emails or search_emails.",
    )
    payload = message.get("payload", {})
    head = _headers(payload)
    lines = [f"{name}: {head[name.lower()]}" for name in SHOWN_HEADERS if head.get(name.lower())]
    text, attachments = body_text(payload)
    if attachments:
        lines.append("Attachments: " + "; ".join(attachments))
    limit = services(ctx).section.max_chars
    return "\n".join(lines) + "\n\n" + (cap(text, limit) if text else "(no text body)")


def _recipients(to: str) -> str:
    if "\n" in to or "\r" in to:
        raise ModelRetry("`to` must be email addresses on one line, separated by commas.")
    pairs = email.utils.getaddresses([to])
    addresses = [addr for _name, addr in pairs if addr]
    bad = [
        addr
        for addr in addresses
        if not re.fullmatch(r"[^@\s<>,;]+@[^@\s<>,;]+\.[^@\s<>,;]+", addr)
    ]
    if not addresses or bad:
        raise ModelRetry(
            f"{to!r} is not a list of email addresses; use e.g. 'alice@example.com, bob@example.org'."
        )
    return ", ".join(email.utils.formataddr(pair) for pair in pairs if pair[1])


def draft_email(
    ctx: RunContext[Any], to: str, subject: str, body: str, reply_to_id: str | None = None
) -> str:
    """Create a Gmail draft (it is NOT sent; the user reviews and sends it in Gmail).

    Give reply_to_id (an email id) to draft a reply in that email's thread.
    """
    recipients = _recipients(to)
    if "\n" in subject or "\r" in subject:
        raise ModelRetry("subject must be one line.")
    message = EmailMessage()
    message["To"] = recipients
    message["Subject"] = subject
    message.set_content(body)
    draft: dict[str, Any] = {}
    if reply_to_id:
        reply_to_id = _check_id(reply_to_id)
        original = call(
            ctx,
            "gmail",
            lambda g: (
                g.users()
                .messages()
                .get(
                    userId="me",
                    id=reply_to_id,
                    format="metadata",
                    metadataHeaders=["Message-ID", "References", "Subject"],
                )
            ),
            not_found=f"No email has id {reply_to_id!r} to reply to.",
        )
        head = _headers(original.get("payload", {}))
        if head.get("message-id"):
            message["In-Reply-To"] = head["message-id"]
            message["References"] = (head.get("references", "") + " " + head["message-id"]).strip()
        draft["threadId"] = original.get("threadId")
    draft["raw"] = base64.urlsafe_b64encode(message.as_bytes()).decode("ascii")
    created = call(
        ctx,
        "gmail",
        lambda g: g.users().drafts().create(userId="me", body={"message": draft}),
    )
    message_id = created.get("message", {}).get("id", created.get("id", ""))
    return (
        f"Draft created (not sent) to {recipients}: {subject!r}. "
        f"Review and send it in Gmail: {DRAFT_LINK.format(message_id)}"
    )
