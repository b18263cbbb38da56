"""Who a draft is written to, and with which subject: worked out once, exactly.

:func:`plan` turns a ``draft_email`` call into a :class:`Draft`: the recipients of To, Cc
and Bcc (for a reply, the sender and with reply-all everyone else) and the subject and
thread Gmail will use. The permission resolver keys each recipient, the approval prompt
shows the plan's own arguments (:func:`resolved_args`), and the tool writes the message
from the same plan, so what the user approved is what the draft holds.

An address is keyed in one canonical form, and that form is what the header carries,
byte for byte: the local part lower-case ASCII (a dot-atom), the domain lower-case IDNA
(``bücher.example`` is ``xn--bcher-kva.example``, which also shows look-alike letters).
Text that mail parsers could read as different recipients (comments, groups, quoted or
non-ASCII local parts, encoded words, addresses hidden in display names) is refused or
its display name dropped; and the message's bytes are read back by two parsers, which
must both find exactly the keyed recipients (:func:`check`).
"""

from __future__ import annotations

import email.policy
import email.utils
import re
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from email.headerregistry import Address
from email.message import EmailMessage
from typing import Any

# RFC 5322 3.6.4's msg-id as Co writes it: "<" id-left "@" id-right ">", printable ASCII
# without "<", ">" or white space (no comments, no folding inside).
MSG_ID = re.compile(r"<[!-;=?-~]+@[!-;=?-~]+>")
ID_FIELDS = frozenset({"in-reply-to", "references"})

LOCAL = re.compile(r"[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
REPLY_HEADERS = ["From", "To", "Cc", "Reply-To", "Subject", "Message-ID", "References"]
FIELDS = ("to", "cc", "bcc")
HINT = "use e.g. 'alice@example.com, Bob <bob@example.org>'"


class _Threading(email.policy.EmailPolicy):
    """Python's default policy, except In-Reply-To and References: folded between their
    msg-ids and never written as RFC 2047 encoded words, which the default policy does to
    a line over 78 characters and RFC 5322 forbids there (CPython gh-100991; Exchange
    drops such a header and the reply does not thread)."""

    def fold(self, name: str, value: Any) -> str:
        if name.lower() in ID_FIELDS:
            return self._ids(name, str(value))
        return super().fold(name, value)

    def fold_binary(self, name: str, value: Any) -> bytes:
        if name.lower() in ID_FIELDS:
            return self._ids(name, str(value)).encode("ascii")
        return super().fold_binary(name, value)

    def _ids(self, name: str, value: str) -> str:
        lines = [f"{name}:"]
        for msg_id in value.split():  # only msg-ids get here (msg_ids)
            if len(lines[-1]) + 1 + len(msg_id) > 78 and lines[-1] != f"{name}:":
                lines.append("")
            lines[-1] += " " + msg_id
        return self.linesep.join(lines) + self.linesep


THREADING = _Threading()


def msg_ids(text: str) -> list[str]:
    """The msg-ids of a header someone else wrote, each once, in order; whatever is not
    one (an encoded word, a comment, non-ASCII) is left out rather than copied."""
    tokens = (text or "").split()
    return list(dict.fromkeys(t for t in tokens if len(t) <= 900 and MSG_ID.fullmatch(t)))


class BadDraft(ValueError):
    """A draft Co cannot write exactly as asked (addresses, a subject of several lines);
    the message says how to write it."""


@dataclass(frozen=True)
class Recipient:
    name: str  # display name, "" when there is none (or it was dropped)
    address: str  # canonical: what is keyed and what the header carries

    def header(self) -> str:
        local, _, domain = self.address.rpartition("@")
        return str(Address(display_name=self.name, username=local, domain=domain))


@dataclass(frozen=True)
class Draft:
    """A draft as it will be written."""

    to: tuple[Recipient, ...]
    cc: tuple[Recipient, ...]
    bcc: tuple[Recipient, ...]
    subject: str
    thread_id: str = ""
    in_reply_to: str = ""
    references: str = ""

    @property
    def addresses(self) -> list[str]:
        """Every recipient once, in header order: one permission key each."""
        return [r.address for r in (*self.to, *self.cc, *self.bcc)]


def canonical(address: str, field: str = "to") -> str:
    """``Alice@Bücher.Example`` as ``alice@xn--bcher-kva.example``; BadDraft if it is
    not a plain internet address."""
    import idna

    local, at, domain = address.strip().rpartition("@")
    local = local.lower()
    if not at or not local.isascii() or not LOCAL.fullmatch(local):
        raise BadDraft(
            f"{field}: {address!r} is not an address Co can write exactly "
            f"(plain letters, digits and dots before the @); {HINT}."
        )
    try:
        ascii_domain = idna.encode(domain.rstrip("."), uts46=True).decode("ascii").lower()
    except (idna.IDNAError, UnicodeError) as exc:
        raise BadDraft(f"{field}: {address!r} has no valid domain ({exc}); {HINT}.") from None
    labels = ascii_domain.split(".")
    if len(labels) < 2 or not all(LABEL.fullmatch(label) for label in labels):
        raise BadDraft(f"{field}: {address!r} has no valid domain; {HINT}.")
    return f"{local}@{ascii_domain}"


def clean_name(name: str) -> str:
    """A display name that can only be read as a name; "" (dropped) when it carries an
    address, angle brackets, an encoded word or characters a terminal hides."""
    name = " ".join(name.split())
    hidden = any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in name)
    if hidden or "@" in name or "<" in name or ">" in name or "=?" in name:
        return ""
    return name


def parse(text: str, field: str = "to") -> list[Recipient]:
    """``"Alice <a@x.org>, b@y.org"`` as recipients, or BadDraft.

    Python's two address parsers must agree on the list; where they differ the text is
    ambiguous, and a mail server might read it either way.
    """
    text = (text or "").strip()
    if not text:
        return []
    if "\n" in text or "\r" in text:
        raise BadDraft(f"`{field}` must be email addresses on one line, separated by commas.")
    if "=?" in text:
        raise BadDraft(f"`{field}` must be written plainly, without encoded words; {HINT}.")
    bad = BadDraft(f"{field}={text!r} is not a list of email addresses; {HINT}.")
    try:
        header = email.policy.default.header_factory(field, text)
        strict = [(a.display_name, a.addr_spec) for a in header.addresses]
        grouped = any(group.display_name is not None for group in header.groups)
    except (AttributeError, IndexError, TypeError, ValueError):  # the parser's own bugs
        raise bad from None
    loose = [a for _n, a in email.utils.getaddresses([text]) if a]
    if header.defects or grouped or not strict or [a for _n, a in strict] != loose:
        raise bad
    return [Recipient(clean_name(name), canonical(addr, field)) for name, addr in strict]


def merge(*groups: Collection[Recipient], skip: Collection[str] = ()) -> tuple[Recipient, ...]:
    """The recipients in order, each address once, none of those in ``skip``."""
    seen = set(skip)
    out = []
    for group in groups:
        for recipient in group:
            if recipient.address not in seen:
                seen.add(recipient.address)
                out.append(recipient)
    return tuple(out)


def _lenient(text: str) -> list[Recipient]:
    """Addresses of an email someone else wrote (a reply's headers); those Co cannot
    write exactly are refused by name."""
    found = []
    for name, addr in email.utils.getaddresses([text or ""]):
        if addr:
            found.append(Recipient(clean_name(name), canonical(addr, "the original email")))
    return found


def reply_to(
    head: Mapping[str, str], me: str, reply_all: bool
) -> tuple[tuple[Recipient, ...], tuple[Recipient, ...]]:
    """To and Cc of a reply to an email with headers ``head`` (lower-case names).

    A reply goes to Reply-To, else From; replying to one's own email goes to its To.
    Reply-all adds the other To and Cc recipients, never the user.
    """
    mine = {canonical(me)} if me else set()
    sender = _lenient(head.get("reply-to") or head.get("from", ""))
    others = _lenient(head.get("to", ""))
    if sender and sender[0].address in mine:
        sender, others = others, []
    to = merge(sender, others if reply_all else [], skip=mine)
    cc_sent = _lenient(head.get("cc", "")) if reply_all else []
    cc = merge(cc_sent, skip=mine | {r.address for r in to})
    return to, cc


def reply_subject(original: str) -> str:
    """``Re: <original subject>``, without piling up ``Re: Re:`` (Gmail threads on it)."""
    original = " ".join((original or "").split())
    return original if re.match(r"re\s*:", original, re.I) else f"Re: {original}".strip()


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


def plan(google: Any, args: Mapping[str, Any]) -> Draft:
    """The draft a ``draft_email`` call writes, replies worked out (BadDraft if bad).

    Reads the replied-to email's headers through ``google`` (cached for the session)."""
    to, cc, bcc = (parse(str(args.get(f) or ""), f) for f in FIELDS)
    typed = str(args.get("subject") or "")
    if "\n" in typed or "\r" in typed:
        raise BadDraft("subject must be one line.")
    subject = " ".join(typed.split())
    reply = str(args.get("reply_to_id") or "").strip()
    thread_id = message_id = references = ""
    if reply:
        thread_id, head = original_headers(google, reply)
        sent_to, sent_cc = reply_to(head, my_address(google), bool(args.get("reply_all")))
        to = list(merge(to, sent_to) if args.get("reply_all") or not to else to)
        cc = [*cc, *sent_cc]
        subject = reply_subject(head.get("subject", ""))  # Gmail threads a reply on it
        found = msg_ids(head.get("message-id", ""))
        message_id = found[0] if len(found) == 1 else ""
        if message_id:  # RFC 5322 3.6.4: the parent's References, then its Message-ID
            references = " ".join(msg_ids(head.get("references", "") + " " + message_id))
    # each address once, in the first field that names it
    final_to = merge(to)
    final_cc = merge(cc, skip={r.address for r in final_to})
    final_bcc = merge(bcc, skip={r.address for r in (*final_to, *final_cc)})
    return Draft(final_to, final_cc, final_bcc, subject, thread_id, message_id, references)


def resolved_args(draft: Draft, args: Mapping[str, Any]) -> dict[str, Any]:
    """The call's arguments as the draft will use them: shown at the approval prompt,
    then run (planning them again gives the same draft)."""
    joined = {f: ", ".join(r.header() for r in getattr(draft, f)) for f in FIELDS}
    return {**args, **joined, "subject": draft.subject}


def message(draft: Draft, body: str) -> EmailMessage:
    """The MIME message for a draft."""
    message = EmailMessage(policy=THREADING)
    if draft.in_reply_to:
        message["In-Reply-To"] = draft.in_reply_to
        message["References"] = draft.references
    for field in FIELDS:
        recipients = getattr(draft, field)
        if recipients:
            message[field.capitalize()] = ", ".join(r.header() for r in recipients)
    message["Subject"] = draft.subject
    message.set_content(body)
    return message


def recipients_in(raw: bytes) -> list[str]:
    """The addresses of To, Cc and Bcc as a mail parser reads them from the bytes."""
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    found: list[str] = []
    for field in FIELDS:
        for header in parsed.get_all(field, []):
            found += [a.addr_spec for a in header.addresses]
    return found


def check(draft: Draft, body: str = "") -> bytes:
    """The message's bytes, after reading them back: both parsers must find exactly the
    keyed recipients, in order (BadDraft otherwise)."""
    raw = message(draft, body).as_bytes()
    # As a mail program reads the wire: encoded words are opaque, folds are spaces.
    parsed = email.message_from_bytes(raw, policy=email.policy.compat32)
    values = [str(v) for field in FIELDS for v in parsed.get_all(field, [])]
    loose = [a for _n, a in email.utils.getaddresses(values) if a]
    if recipients_in(raw) != draft.addresses or loose != draft.addresses:
        raise BadDraft(
            "Co cannot write these recipients so that every mail program reads the same "
            f"addresses; {HINT}."
        )
    return raw


def draft_recipients(google: Any, args: Mapping[str, Any]) -> list[str]:
    """Every address a ``draft_email`` call writes to, canonical, each once, in order."""
    return plan(google, args).addresses
