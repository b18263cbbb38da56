"""Who a draft is written to: addresses checked, replies and reply-all worked out.

``draft_recipients`` gives the normalised addresses of a ``draft_email`` call (To, Cc, Bcc,
and for a reply the sender and, with reply-all, everyone else), one permission key each.
It reads the original email's headers through the ``google`` resource only for replies,
and keeps them so the tool that runs next does not fetch them again.
"""

from __future__ import annotations

import email.utils
import re
from collections.abc import Collection, Mapping
from typing import Any

ADDRESS = re.compile(r"[^@\s<>,;\"]+@[^@\s<>,;\"]+\.[^@\s<>,;\"]+")
REPLY_HEADERS = ["From", "To", "Cc", "Reply-To", "Subject", "Message-ID", "References"]
Pair = tuple[str, str]


class BadAddresses(ValueError):
    """Text that is not a list of email addresses; the message says how to write one."""


def parse(text: str, field: str = "to") -> list[Pair]:
    """``"Alice <a@x.org>, b@y.org"`` as ``[("Alice", "a@x.org"), ("", "b@y.org")]``."""
    text = (text or "").strip()
    if not text:
        return []
    if "\n" in text or "\r" in text:
        raise BadAddresses(f"`{field}` must be email addresses on one line, separated by commas.")
    pairs = [(name, addr) for name, addr in email.utils.getaddresses([text]) if addr]
    if not pairs or any(not ADDRESS.fullmatch(addr) for _name, addr in pairs):
        raise BadAddresses(
            f"{field}={text!r} is not a list of email addresses; "
            "use e.g. 'alice@example.com, Bob <bob@example.org>'."
        )
    return pairs


def key(address: str) -> str:
    return address.strip().lower()


def merge(*groups: list[Pair], skip: Collection[str] = ()) -> list[Pair]:
    """The pairs in order, each address once, none of those in ``skip``."""
    seen = set(skip)
    out = []
    for group in groups:
        for name, addr in group:
            if key(addr) not in seen:
                seen.add(key(addr))
                out.append((name, addr))
    return out


def reply_to(head: Mapping[str, str], me: str, reply_all: bool) -> tuple[list[Pair], list[Pair]]:
    """To and Cc of a reply to an email with headers ``head`` (lower-case names).

    A reply goes to Reply-To, else From; replying to one's own email goes to its To.
    Reply-all adds the other To and Cc recipients, never the user.
    """
    mine = {key(me)} if me else set()
    sender = _pairs(head.get("reply-to") or head.get("from", ""))
    others = _pairs(head.get("to", ""))
    if sender and key(sender[0][1]) in mine:
        sender, others = others, []
    to = merge(sender, others if reply_all else [], skip=mine)
    cc = merge(_pairs(head.get("cc", "")) if reply_all else [], skip=mine | {key(a) for _, a in to})
    return to, cc


def reply_subject(original: str) -> str:
    """``Re: <original subject>``, without piling up ``Re: Re:`` (Gmail threads on it)."""
    original = (original or "").strip()
    return original if re.match(r"re\s*:", original, re.I) else f"Re: {original}".strip()


def _pairs(text: str) -> list[Pair]:
    return [(name, addr) for name, addr in email.utils.getaddresses([text]) if addr]


def original_headers(google: Any, email_id: str) -> tuple[str, dict[str, str]]:
    """The thread id and headers (lower-case names) of the email replied to; cached."""
    cached = google.reply_heads.get(email_id)
    if cached is None:
        request = (
            google.client("gmail")
            .users()
            .messages()
            .get(userId="me", id=email_id, format="metadata", metadataHeaders=REPLY_HEADERS)
        )
        message = google.execute(request, "gmail")
        head = {
            h["name"].lower(): h.get("value", "")
            for h in message.get("payload", {}).get("headers", [])
        }
        cached = google.reply_heads[email_id] = (str(message.get("threadId", "")), head)
    return cached


def my_address(google: Any) -> str:
    """The signed-in account's address (Gmail's profile), asked once per session."""
    if google.me is None:
        request = google.client("gmail").users().getProfile(userId="me")
        google.me = str(google.execute(request, "gmail").get("emailAddress", ""))
    return google.me


def addressed(google: Any, args: Mapping[str, Any]) -> tuple[list[Pair], list[Pair], list[Pair]]:
    """To, Cc and Bcc of a ``draft_email`` call, replies worked out (BadAddresses if bad)."""
    to, cc, bcc = (parse(str(args.get(f) or ""), f) for f in ("to", "cc", "bcc"))
    reply = str(args.get("reply_to_id") or "").strip()
    if reply:
        everyone = bool(args.get("reply_all"))
        _thread, head = original_headers(google, reply)
        sent_to, sent_cc = reply_to(head, my_address(google), everyone)
        if everyone or not to:
            to = merge(to, sent_to)
        cc = merge(cc, sent_cc, skip={key(a) for _, a in to})
    return to, cc, bcc


def draft_recipients(google: Any, args: Mapping[str, Any]) -> list[str]:
    """Every address a ``draft_email`` call writes to, lower-case, each once, in order.

    For the permission check: one key per recipient. Addresses that do not parse are
    left out (the tool refuses the call anyway).
    """
    try:
        to, cc, bcc = addressed(google, args)
    except BadAddresses:
        return []
    return [key(addr) for _name, addr in merge(to, cc, bcc)]
