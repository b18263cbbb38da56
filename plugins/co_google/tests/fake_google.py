"""A local stand-in for Google's REST APIs, speaking their documented wire format.

The endpoints Co uses: Drive v3 (files.list/get/export, about.get), Gmail v1 (profile,
labels, messages list/get/modify, attachments, threads get/modify, drafts.create, batch),
Calendar v3 (calendarList, events list/get, freeBusy, batch) and the OAuth token and
consent endpoints. Bodies follow Google's API reference: opaque page tokens, MIME parts with
base64url bodies, all-day (``date``) and timed (``dateTime``) events, Google's error
envelope.

It is strict where Google is, so Co's mistakes show up here rather than in a user's
terminal:

- every call needs an access token whose scopes include one the discovery document lists
  for that method (403 ``insufficientPermissions`` otherwise); a refresh may only ask for
  scopes the user granted (400 ``invalid_scope``);
- ``fields`` is checked against the response schema (400 ``Invalid field selection``) and
  applied, so a field Co forgets to ask for is missing;
- ``orderBy=startTime`` needs ``singleEvents=true``; a draft's ``raw`` must be base64url;
  a reply draft only joins its thread when the Subject matches and In-Reply-To or
  References name one of its messages as RFC 5322 msg-ids (Gmail's threading rule; an
  encoded word there is no msg-id);
- Gmail attachment ids differ on every fetch; a batch holds at most 100 calls;
- Drive's ``files.list`` searches the ``user`` corpus unless ``corpora`` says otherwise:
  a file in a shared drive (``"drive": "Sales"``) that the user never opened and that was
  not shared with them directly (``"touched": False``) is found with ``corpora=allDrives``
  only, which in turn needs ``includeItemsFromAllDrives=true``; ``incomplete_drives``
  makes an ``allDrives`` search report ``incompleteSearch: true``;
- a ranged download (``Range: bytes=0-…``) of a 0-byte file, or from past the end, is 416
  ``requestedRangeNotSatisfiable`` (google-api-python-client#638);
- ``files.export`` refuses content over 10 MB (403 ``exportSizeLimitExceeded``), and a
  Sheet exports only its first tab as CSV or TSV (``spreadsheet()`` builds the exports of
  a Sheet with several tabs, as Google documents them).

Every request is recorded (``requests``, with ``in_batch`` for calls inside a batch;
``http_requests`` counts what crossed the wire) so tests can assert what reached "Google".
"""

from __future__ import annotations

import base64
import binascii
import email
import email.policy
import itertools
import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

S = "https://www.googleapis.com/auth/"
FULL_GRANT = frozenset(
    {
        S + "drive.readonly",
        S + "gmail.readonly",
        S + "gmail.compose",
        S + "gmail.modify",
        S + "calendar.readonly",
    }
)
ME = "me@example.com"


def b64url(data: str | bytes) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def error_body(code: int, message: str, reason: str, status: str, **extra: Any) -> dict:
    body = {
        "code": code,
        "message": message,
        "errors": [{"message": message, "domain": "global", "reason": reason}],
        "status": status,
    }
    body.update(extra)
    return {"error": body}


def not_enabled(api_host: str) -> dict:
    message = (
        f"{api_host} has not been used in project 123456 before or it is disabled. Enable it "
        f"by visiting https://console.developers.google.com/apis/api/{api_host}/overview"
        "?project=123456 then retry."
    )
    body = error_body(403, message, "accessNotConfigured", "PERMISSION_DENIED")
    body["error"]["errors"][0]["domain"] = "usageLimits"
    body["error"]["details"] = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "SERVICE_DISABLED",
            "domain": "googleapis.com",
            "metadata": {"service": api_host, "consumer": "projects/123456"},
        }
    ]
    return body


UNAUTHORIZED = error_body(
    401,
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
    "cookie or other valid authentication credential.",
    "authError",
    "UNAUTHENTICATED",
)
INSUFFICIENT_SCOPES = error_body(
    403,
    "Request had insufficient authentication scopes.",
    "insufficientPermissions",
    "PERMISSION_DENIED",
    details=[
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
            "domain": "googleapis.com",
        }
    ],
)
RATE_LIMITED = error_body(
    429, "Quota exceeded for quota metric 'Queries'.", "rateLimitExceeded", "RESOURCE_EXHAUSTED"
)
NOT_FOUND = error_body(404, "Requested entity was not found.", "notFound", "NOT_FOUND")


def bad_request(message: str, reason: str = "badRequest") -> tuple[int, dict]:
    return 400, error_body(400, message, reason, "INVALID_ARGUMENT")


# -- the discovery documents shipped with google-api-python-client: paths, scopes, schemas --


@dataclass(frozen=True)
class Method:
    id: str
    http: str
    pattern: re.Pattern[str]  # the path, its {placeholders} captured
    scopes: frozenset[str]
    response: str | None
    doc: dict[str, Any]


def _load_methods() -> list[Method]:
    import googleapiclient

    folder = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"
    found: list[Method] = []
    for name in ("drive.v3", "gmail.v1", "calendar.v3"):
        doc = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))

        def walk(resource: dict[str, Any], doc: dict[str, Any] = doc) -> None:
            for method in resource.get("methods", {}).values():
                path = doc["servicePath"] + method.get("flatPath", method["path"])
                regex = re.sub(r"\\\{\\\+[^}]+\\\}", "(.+)", re.escape("/" + path))
                regex = re.sub(r"\\\{[^}]+\\\}", "([^/]+)", regex)
                found.append(
                    Method(
                        method["id"],
                        method["httpMethod"],
                        re.compile(regex),
                        frozenset(method.get("scopes", [])),
                        (method.get("response") or {}).get("$ref"),
                        doc,
                    )
                )
            for child in resource.get("resources", {}).values():
                walk(child)

        walk(doc)
    return found


METHODS = _load_methods()


def method_for(http: str, path: str) -> Method | None:
    for method in METHODS:
        if method.http == http and method.pattern.fullmatch(path):
            return method
    return None


def parse_fields(text: str) -> dict[str, Any]:
    """A ``fields`` selector as a tree: ``{"files": {"id": {}, "name": {}}}``."""
    pos = 0

    def parse_list() -> dict[str, Any]:
        nonlocal pos
        tree: dict[str, Any] = {}
        while True:
            match = re.compile(r"\s*([A-Za-z_@*][\w@.-]*(?:/[A-Za-z_@*][\w@.-]*)*)\s*").match(
                text, pos
            )
            if not match:
                raise ValueError(text[pos:] or text)
            pos = match.end()
            names = match.group(1).split("/")
            leaf = tree
            for name in names[:-1]:
                leaf = leaf.setdefault(name, {})
            sub: dict[str, Any] = {}
            if pos < len(text) and text[pos] == "(":
                pos += 1
                sub = parse_list()
                if pos >= len(text) or text[pos] != ")":
                    raise ValueError(text)
                pos += 1
            leaf.setdefault(names[-1], {}).update(sub)
            while pos < len(text) and text[pos] == " ":
                pos += 1
            if pos < len(text) and text[pos] == ",":
                pos += 1
                continue
            return tree

    tree = parse_list()
    if pos != len(text):
        raise ValueError(text[pos:])
    return tree


def _schema(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = doc["schemas"][node["$ref"]]
    return node


def select(doc: dict[str, Any], schema: dict[str, Any], tree: dict[str, Any], value: Any) -> Any:
    """Check ``tree`` against ``schema`` (ValueError names a bad field) and apply it."""
    schema = _schema(doc, schema)
    if schema.get("type") == "array":
        return [select(doc, schema["items"], tree, item) for item in value]
    if not tree:
        return value
    if "additionalProperties" in schema and "properties" not in schema:
        inner = schema["additionalProperties"]
        return {k: select(doc, inner, tree, v) for k, v in value.items()}
    props = schema.get("properties", {})
    out: dict[str, Any] = {}
    for name, sub in tree.items():
        if name == "*":
            return value
        if name not in props:
            raise ValueError(name)
        if isinstance(value, dict) and name in value:
            out[name] = select(doc, props[name], sub, value[name])
        else:
            select(
                doc,
                props[name],
                sub,
                [] if _schema(doc, props[name]).get("type") == "array" else {},
            )
    return out


# -- test data helpers ---------------------------------------------------------------------


def gmail_message(
    msg_id: str,
    *,
    sender: str,
    to: str = ME,
    subject: str,
    date: str = "Fri, 20 Nov 2026 09:15:00 +0100",
    plain: str | None = None,
    html: str | None = None,
    attachment: tuple[str, str, bytes] | None = None,
    attachments: list[tuple[str, str, bytes]] | None = None,
    labels: tuple[str, ...] = ("INBOX",),
    thread_id: str | None = None,
    cc: str | None = None,
    reply_to: str | None = None,
    references: str | None = None,
    message_id: str | None = None,
) -> dict:
    """A Gmail ``users.messages`` resource in ``format=full``.

    Attachment bytes ride along under ``_data`` (never sent: the fake serves them from
    ``attachments.get`` only).
    """
    headers = [
        {"name": "From", "value": sender},
        {"name": "To", "value": to},
        {"name": "Subject", "value": subject},
        {"name": "Date", "value": date},
        {"name": "Message-ID", "value": message_id or f"<{msg_id}@mail.example.com>"},
    ]
    if cc:
        headers.append({"name": "Cc", "value": cc})
    if reply_to:
        headers.append({"name": "Reply-To", "value": reply_to})
    if references:
        headers.append({"name": "References", "value": references})
    parts = []
    if plain is not None:
        parts.append(
            {
                "partId": "0.0",
                "mimeType": "text/plain",
                "filename": "",
                "headers": [{"name": "Content-Type", "value": 'text/plain; charset="UTF-8"'}],
                "body": {"size": len(plain.encode()), "data": b64url(plain)},
            }
        )
    if html is not None:
        parts.append(
            {
                "partId": "0.1",
                "mimeType": "text/html",
                "filename": "",
                "headers": [{"name": "Content-Type", "value": 'text/html; charset="UTF-8"'}],
                "body": {"size": len(html.encode()), "data": b64url(html)},
            }
        )
    alternative = {
        "partId": "0",
        "mimeType": "multipart/alternative",
        "filename": "",
        "headers": [{"name": "Content-Type", "value": "multipart/alternative; boundary=b1"}],
        "body": {"size": 0},
        "parts": parts,
    }
    top_parts = [alternative]
    for number, (name, mime, data) in enumerate(
        ([attachment] if attachment else []) + (attachments or []), start=1
    ):
        top_parts.append(
            {
                "partId": str(number),
                "mimeType": mime,
                "filename": name,
                "headers": [{"name": "Content-Type", "value": f'{mime}; name="{name}"'}],
                "body": {"attachmentId": "placeholder", "size": len(data)},
                "_data": data,
            }
        )
    payload = {
        "partId": "",
        "mimeType": "multipart/mixed",
        "filename": "",
        "headers": headers + [{"name": "Content-Type", "value": "multipart/mixed; boundary=b0"}],
        "body": {"size": 0},
        "parts": top_parts,
    }
    snippet = (plain or re.sub("<[^>]+>", "", html or ""))[:100]
    return {
        "id": msg_id,
        "threadId": thread_id or f"t-{msg_id}",
        "labelIds": list(labels),
        "snippet": snippet.replace("'", "&#39;"),
        "sizeEstimate": 2048,
        "historyId": "9001",
        "internalDate": "1795162500000",
        "payload": payload,
    }


SHEET = "application/vnd.google-apps.spreadsheet"
ODS = "application/vnd.oasis.opendocument.spreadsheet"


def spreadsheet(file_id: str, name: str, tabs: dict[str, list[list[str]]]) -> dict[str, Any]:
    """A Google Sheet with ``tabs`` (name -> rows), exported as Drive documents it: CSV and
    TSV hold the first tab only; OpenDocument holds every tab."""
    import csv
    import io

    first = next(iter(tabs.values()), [])
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(first)
    tsv = "\n".join("\t".join(row) for row in first) + "\n"
    return {
        "id": file_id,
        "name": name,
        "mimeType": SHEET,
        "text": " ".join(cell for rows in tabs.values() for row in rows for cell in row),
        "exports": {"text/csv": out.getvalue(), "text/tab-separated-values": tsv, ODS: ods(tabs)},
    }


def ods(tabs: dict[str, list[list[str]]]) -> bytes:
    """An OpenDocument spreadsheet as Google exports one: a zip whose content.xml holds a
    ``table:table`` per tab, empty cells run-length encoded, and a long empty tail."""
    import io
    import zipfile
    from xml.sax.saxutils import escape, quoteattr

    def cell(value: str) -> str:
        if value == "":
            return "<table:table-cell/>"
        kind = "float" if re.fullmatch(r"-?\d+(\.\d+)?", value) else "string"
        number = f" office:value={quoteattr(value)}" if kind == "float" else ""
        paragraphs = "".join(f"<text:p>{escape(line)}</text:p>" for line in value.split("\n"))
        return (
            f'<table:table-cell office:value-type="{kind}"{number}>{paragraphs}</table:table-cell>'
        )

    tables = []
    for tab, rows in tabs.items():
        body = "".join(
            "<table:table-row>"
            + "".join(cell(v) for v in row)
            + '<table:table-cell table:number-columns-repeated="1020"/></table:table-row>'
            for row in rows
        )
        tail = '<table:table-row table:number-rows-repeated="999000"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>'
        tables.append(
            f"<table:table table:name={quoteattr(tab)}><table:table-column "
            f'table:number-columns-repeated="1024"/>{body}{tail}</table:table>'
        )
    content = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
        "<office:body><office:spreadsheet>"
        + "".join(tables)
        + "</office:spreadsheet></office:body>"
        "</office:document-content>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), ODS)
        archive.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def _public(value: Any) -> Any:
    """A copy without the fake's private ``_keys``."""
    if isinstance(value, dict):
        return {k: _public(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [_public(v) for v in value]
    return value


def _headers_of(message: dict) -> dict[str, str]:
    return {h["name"].lower(): h["value"] for h in message["payload"].get("headers", [])}


MSG_ID = re.compile(r"<[!-=?-~]+@[!-=?-~]+>")  # RFC 5322 3.6.4, no comments or folding inside


def msg_ids(mime: bytes) -> set[str]:
    """The msg-ids of In-Reply-To and References as a mail server reads the bytes: the
    field bodies unfolded, each a list of ``<left@right>`` separated by white space.
    Anything else (an RFC 2047 encoded word, which RFC 5322 forbids there) makes the field
    unreadable, as Exchange drops it."""
    raw = email.message_from_bytes(mime, policy=email.policy.compat32)
    found: set[str] = set()
    for name in ("In-Reply-To", "References"):
        for value in raw.get_all(name, []):
            tokens = re.sub(r"\r?\n[ \t]", " ", str(value)).split()
            if all(MSG_ID.fullmatch(token) for token in tokens):
                found.update(tokens)
    return found


def _bare_subject(subject: str) -> str:
    return re.sub(r"^\s*((re|fwd?|aw|sv)\s*:\s*)+", "", subject or "", flags=re.I).strip().lower()


@dataclass
class Reply:
    status: int
    body: Any
    content_type: str = "application/json; charset=UTF-8"
    headers: dict[str, str] = field(default_factory=dict)

    def data(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


@dataclass
class FakeGoogle:
    """The server's state; tests fill it, then read ``requests`` and ``drafts``."""

    url: str = ""
    # access token -> the scopes it carries; refresh token -> the scopes the user granted
    tokens: dict[str, set[str]] = field(default_factory=lambda: {"good-token": set(FULL_GRANT)})
    refresh_tokens: dict[str, set[str]] = field(
        default_factory=lambda: {"good-refresh": set(FULL_GRANT)}
    )
    consent: set[str] = field(default_factory=lambda: set(FULL_GRANT))  # what "good-code" grants
    drive_files: dict[str, dict[str, Any]] = field(default_factory=dict)
    labels: list[dict[str, Any]] = field(default_factory=list)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)  # the primary calendar's
    calendars: list[dict[str, Any]] = field(default_factory=list)  # other calendarList entries
    calendar_events: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    calendar_groups: dict[str, list[str]] = field(default_factory=dict)  # group -> members
    failing_calendars: set[str] = field(default_factory=set)  # free/busy: internalError
    drafts: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    http_requests: int = 0
    # path prefix -> responses (status, body) served before the real handler, one per request
    failures: dict[str, list[tuple[int, dict]]] = field(default_factory=dict)
    page_size_cap: int = 100
    incomplete_drives: bool = False  # an allDrives search could not search every drive
    export_limit: int = 10 * 1024 * 1024  # Drive's documented export limit
    code_exchanges: list[dict[str, str]] = field(default_factory=list)
    latency: float = 0.0  # seconds each HTTP request takes (benchmarks: a network's round trip)
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _attachment_ids: dict[str, tuple[str, str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _local: threading.local = field(default_factory=threading.local)

    def fail(self, prefix: str, *responses: tuple[int, dict]) -> None:
        self.failures.setdefault(prefix, []).extend(responses)

    def reached(self, prefix: str, method: str | None = None) -> list[dict[str, Any]]:
        return [
            r
            for r in self.requests
            if r["path"].startswith(prefix) and (method is None or r["method"] == method)
        ]

    # -- dispatch ------------------------------------------------------------------------
    def dispatch(
        self, method: str, target: str, headers: dict[str, str], raw: bytes, in_batch: bool
    ) -> Reply:
        split = urllib.parse.urlsplit(target)
        path = split.path
        multi = urllib.parse.parse_qs(split.query)
        params = {k: v[-1] for k, v in multi.items()}
        record = {
            "method": method,
            "path": path,
            "params": params,
            "multi": multi,
            "body": raw,
            "auth": headers.get("authorization", ""),
            "range": headers.get("range"),
            "in_batch": in_batch,
        }
        with self._lock:
            self.requests.append(record)
        if path == "/token":
            return self._token(raw)
        if path == "/auth":  # the consent screen, already "accepted": back to the app
            target = (
                params["redirect_uri"]
                + "?"
                + urllib.parse.urlencode(
                    {
                        "state": params.get("state", ""),
                        "code": "good-code",
                        "scope": params.get("scope", ""),
                    }
                )
            )
            return Reply(302, b"", headers={"Location": target})
        with self._lock:
            for prefix, queue in self.failures.items():
                if path.startswith(prefix) and queue:
                    status, body = queue.pop(0)
                    return Reply(status, body)
        scopes = self.tokens.get(record["auth"].removeprefix("Bearer "))
        if scopes is None:
            return Reply(401, UNAUTHORIZED)
        if method == "POST" and path in ("/batch", "/batch/calendar/v3", "/batch/drive/v3"):
            if in_batch:
                return Reply(*bad_request("A batch cannot contain a batch."))
            return self._batch(headers, raw)
        found = method_for(method, path)
        handler = getattr(self, (found.id if found else "").replace(".", "_"), None)
        if found is None or handler is None:
            return Reply(404, error_body(404, f"No route {path}", "notFound", "NOT_FOUND"))
        if not scopes & found.scopes:
            return Reply(403, INSUFFICIENT_SCOPES)
        tree = None
        if params.get("fields"):
            try:
                tree = parse_fields(params["fields"])
            except ValueError as exc:
                return Reply(*bad_request(f"Invalid field selection {exc}", "invalidParameter"))
        match = found.pattern.fullmatch(path)
        ids = [urllib.parse.unquote(p) for p in match.groups()] if match else []
        self._local.headers = headers
        reply = handler(params, multi, raw, *ids)
        if tree is not None and reply.status == 200 and found.response and reply.body:
            try:
                schema = {"$ref": found.response}
                reply.body = select(found.doc, schema, tree, reply.body)
            except ValueError as exc:
                return Reply(*bad_request(f"Invalid field selection {exc}", "invalidParameter"))
        if isinstance(reply.body, (dict, list)):
            reply.body = _public(reply.body)
        return reply

    # -- batch ---------------------------------------------------------------------------
    def _batch(self, headers: dict[str, str], raw: bytes) -> Reply:
        content_type = headers.get("content-type", "")
        message = email.message_from_bytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw,
            policy=email.policy.compat32,
        )
        if not message.is_multipart():
            return Reply(*bad_request("A batch must be multipart/mixed."))
        parts = message.get_payload()
        if len(parts) > 100:
            return Reply(*bad_request("Too many requests in batch (at most 100)."))
        boundary = "batch_fake_boundary"
        out = []
        for part in parts:
            inner = part.get_payload()
            if isinstance(inner, list):
                return Reply(*bad_request("A batch part must be application/http."))
            head, _, body = inner.replace("\r\n", "\n").partition("\n\n")
            request_line, *header_lines = head.split("\n")
            verb, target, _version = request_line.split(" ", 2)
            inner_headers = {}
            for line in header_lines:
                name, _, value = line.partition(":")
                inner_headers[name.strip().lower()] = value.strip()
            reply = self.dispatch(verb, target, inner_headers, body.encode(), in_batch=True)
            content_id = part.get("Content-ID", "")
            out.append(
                f"--{boundary}\r\nContent-Type: application/http\r\n"
                f"Content-ID: <response-{content_id.strip('<>')}>\r\n\r\n"
                f"HTTP/1.1 {reply.status} X\r\nContent-Type: {reply.content_type}\r\n\r\n"
                + reply.data().decode("utf-8")
                + "\r\n"
            )
        body = "".join(out) + f"--{boundary}--\r\n"
        return Reply(200, body, f"multipart/mixed; boundary={boundary}")

    # -- OAuth ---------------------------------------------------------------------------
    def _token(self, raw: bytes) -> Reply:
        form = {k: v[-1] for k, v in urllib.parse.parse_qs(raw.decode()).items()}
        if form.get("grant_type") == "refresh_token":
            granted = self.refresh_tokens.get(form.get("refresh_token", ""))
            if granted is None:
                return Reply(
                    400,
                    {
                        "error": "invalid_grant",
                        "error_description": "Token has been expired or revoked.",
                    },
                )
            asked = set(form.get("scope", "").split()) or set(granted)
            if not asked <= granted:
                return Reply(
                    400,
                    {
                        "error": "invalid_scope",
                        "error_description": "Some requested scopes were invalid. {invalid="
                        + str(sorted(asked - granted))
                        + "}",
                    },
                )
            new = f"fresh-token-{next(self._ids)}"
            self.tokens[new] = asked
            return Reply(
                200,
                {
                    "access_token": new,
                    "expires_in": 3599,
                    "token_type": "Bearer",
                    "scope": " ".join(sorted(asked)),
                },
            )
        if form.get("grant_type") == "authorization_code":
            self.code_exchanges.append(form)
            if form.get("code") not in ("good-code", "partial-code"):
                return Reply(400, {"error": "invalid_grant", "error_description": "Bad code."})
            granted = set(self.consent)
            if form["code"] == "partial-code":  # the user allowed Gmail reading only
                granted -= {S + "gmail.compose", S + "gmail.modify"}
            self.tokens["login-token"] = granted
            self.refresh_tokens["login-refresh"] = granted
            return Reply(
                200,
                {
                    "access_token": "login-token",
                    "refresh_token": "login-refresh",
                    "expires_in": 3599,
                    "token_type": "Bearer",
                    "scope": " ".join(sorted(granted)),
                },
            )
        return Reply(400, {"error": "unsupported_grant_type"})

    # -- Drive v3 ------------------------------------------------------------------------
    def drive_files_list(self, params: dict, multi: dict, raw: bytes) -> Reply:
        corpora = params.get("corpora", "user")
        all_drives = params.get("includeItemsFromAllDrives") == "true"
        if corpora == "allDrives" and not all_drives:
            return Reply(
                *bad_request(
                    "The includeItemsFromAllDrives parameter must be set to true when "
                    "corpora is allDrives.",
                    "invalid",
                )
            )
        if corpora not in ("user", "allDrives"):
            return Reply(*bad_request(f"Invalid value for corpora: {corpora}", "invalid"))
        terms = [t.lower() for t in drive_terms(params.get("q", ""))]

        def visible(f: dict) -> bool:
            if not f.get("drive"):
                return True  # My Drive
            if not all_drives:
                return False
            return corpora == "allDrives" or f.get("touched", True)

        found = [
            f
            for f in self.drive_files.values()
            if visible(f)
            and all(t in f["name"].lower() or t in (f.get("text") or "").lower() for t in terms)
        ]
        size = min(int(params.get("pageSize", 100)), self.page_size_cap)
        chunk, token = _page(found, params, size)
        body: dict[str, Any] = {
            "kind": "drive#fileList",
            "incompleteSearch": corpora == "allDrives" and self.incomplete_drives,
            "files": [self._meta(f) for f in chunk],
        }
        if token:
            body["nextPageToken"] = token
        return Reply(200, body)

    def _meta(self, f: dict) -> dict:
        meta = {
            "kind": "drive#file",
            "id": f["id"],
            "name": f["name"],
            "mimeType": f["mimeType"],
            "modifiedTime": f.get("modifiedTime", "2026-11-02T08:30:00.000Z"),
            "webViewLink": f"https://docs.google.com/d/{f['id']}/view",
        }
        if "content" in f:
            meta["size"] = str(len(f["content"]))
        if f.get("exports"):
            meta["exportLinks"] = {
                mime: f"https://docs.google.com/export?id={f['id']}&mimeType={urllib.parse.quote(mime)}"
                for mime in f["exports"]
            }
        return meta

    def drive_files_get(self, params: dict, multi: dict, raw: bytes, file_id: str) -> Reply:
        f = self.drive_files.get(file_id)
        if f is None:
            return Reply(
                404, error_body(404, f"File not found: {file_id}.", "notFound", "NOT_FOUND")
            )
        if params.get("alt") != "media":
            return Reply(200, self._meta(f))
        if "content" not in f:
            return Reply(
                403,
                error_body(
                    403,
                    "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
                    "fileNotDownloadable",
                    "PERMISSION_DENIED",
                ),
            )
        data: bytes = f["content"]
        wanted = re.fullmatch(r"bytes=(\d+)-(\d+)", self._local.headers.get("range") or "")
        if wanted:
            start, end = int(wanted.group(1)), int(wanted.group(2))
            if start >= len(data):  # RFC 9110 15.5.17, and Drive's answer for a 0-byte file
                message = "Request range not satisfiable"
                body = error_body(416, message, "requestedRangeNotSatisfiable", "OUT_OF_RANGE")
                return Reply(416, body, headers={"Content-Range": f"bytes */{len(data)}"})
            part = data[start : end + 1]
            return Reply(
                206,
                part,
                f["mimeType"],
                {"Content-Range": f"bytes {start}-{start + len(part) - 1}/{len(data)}"},
            )
        return Reply(200, data, f["mimeType"])

    def drive_files_export(self, params: dict, multi: dict, raw: bytes, file_id: str) -> Reply:
        f = self.drive_files.get(file_id)
        if f is None:
            return Reply(404, error_body(404, "File not found.", "notFound", "NOT_FOUND"))
        exports = f.get("exports", {})
        wanted = params.get("mimeType", "")
        if wanted not in exports:
            return Reply(*bad_request("The requested conversion is not supported."))
        data = exports[wanted]
        data = data.encode() if isinstance(data, str) else data
        if len(data) > self.export_limit:
            message = "This file is too large to be exported."
            return Reply(
                403, error_body(403, message, "exportSizeLimitExceeded", "PERMISSION_DENIED")
            )
        return Reply(200, data, wanted)

    def drive_about_get(self, params: dict, multi: dict, raw: bytes) -> Reply:
        if not params.get("fields"):
            return Reply(*bad_request("The 'fields' parameter is required for this method."))
        return Reply(200, {"user": {"emailAddress": ME, "displayName": "Me"}})

    # -- Gmail v1 ------------------------------------------------------------------------
    def gmail_users_getProfile(self, params: dict, multi: dict, raw: bytes, user: str) -> Reply:  # noqa: N802
        return Reply(
            200,
            {
                "emailAddress": ME,
                "messagesTotal": len(self.messages),
                "threadsTotal": len({m["threadId"] for m in self.messages.values()}),
                "historyId": "9001",
            },
        )

    def gmail_users_labels_list(self, params: dict, multi: dict, raw: bytes, user: str) -> Reply:
        return Reply(200, {"labels": self.labels})

    def gmail_users_messages_list(self, params: dict, multi: dict, raw: bytes, user: str) -> Reply:
        found = list(self.messages.values())
        for label in multi.get("labelIds", []):
            found = [m for m in found if label in m["labelIds"]]
        for term in params.get("q", "").lower().split():

            def matches(m: dict, term: str = term) -> bool:
                head = {k: v.lower() for k, v in _headers_of(m).items()}
                if term.startswith("from:"):
                    return term[5:] in head.get("from", "")
                return term in head.get("subject", "") or term in m["snippet"].lower()

            found = [m for m in found if matches(m)]
        size = int(params.get("maxResults", 100))
        if size > 500:
            return Reply(*bad_request("maxResults must be at most 500."))
        chunk, token = _page(found, params, size)
        body: dict[str, Any] = {"resultSizeEstimate": len(found)}
        if chunk:
            body["messages"] = [{"id": m["id"], "threadId": m["threadId"]} for m in chunk]
        if token:
            body["nextPageToken"] = token
        return Reply(200, body)

    def _shaped(self, m: dict, params: dict, multi: dict) -> dict:
        """A message as ``format`` asks: full (fresh attachment ids), metadata or minimal."""
        shape = params.get("format", "full")
        if shape == "minimal":
            return {k: v for k, v in m.items() if k != "payload"}
        if shape == "metadata":
            wanted = {h.lower() for h in multi.get("metadataHeaders", [])}
            headers = [
                h for h in m["payload"]["headers"] if not wanted or h["name"].lower() in wanted
            ]
            return {**m, "payload": {"mimeType": m["payload"]["mimeType"], "headers": headers}}
        return {**m, "payload": self._fresh_ids(m["id"], m["payload"])}

    def _fresh_ids(self, msg_id: str, part: dict) -> dict:
        part = dict(part)
        if "_data" in part:
            new = f"ANGjdJ_{next(self._ids)}_{msg_id}"
            self._attachment_ids[new] = (msg_id, part["partId"])
            part["body"] = {**part["body"], "attachmentId": new}
        if part.get("parts"):
            part["parts"] = [self._fresh_ids(msg_id, p) for p in part["parts"]]
        return part

    def gmail_users_messages_get(
        self, params: dict, multi: dict, raw: bytes, user: str, msg_id: str
    ) -> Reply:
        m = self.messages.get(msg_id)
        if m is None:
            return Reply(404, NOT_FOUND)
        return Reply(200, self._shaped(m, params, multi))

    def gmail_users_messages_attachments_get(
        self, params: dict, multi: dict, raw: bytes, user: str, msg_id: str, att_id: str
    ) -> Reply:
        where = self._attachment_ids.get(att_id)
        if where is None or where[0] != msg_id:
            return Reply(*bad_request("Invalid attachment token"))
        for part in _walk(self.messages[msg_id]["payload"]):
            if part.get("partId") == where[1]:
                data = part["_data"]
                return Reply(200, {"size": len(data), "data": b64url(data)})
        return Reply(404, NOT_FOUND)

    def _thread(self, thread_id: str) -> list[dict]:
        return [m for m in self.messages.values() if m["threadId"] == thread_id]

    def gmail_users_threads_get(
        self, params: dict, multi: dict, raw: bytes, user: str, thread_id: str
    ) -> Reply:
        found = self._thread(thread_id)
        if not found:
            return Reply(404, NOT_FOUND)
        return Reply(
            200,
            {
                "id": thread_id,
                "historyId": "9001",
                "messages": [self._shaped(m, params, multi) for m in found],
            },
        )

    def _relabel(self, found: list[dict], raw: bytes) -> Reply | None:
        body = json.loads(raw or b"{}")
        known = {label["id"] for label in self.labels} | {
            "INBOX",
            "UNREAD",
            "STARRED",
            "IMPORTANT",
            "SPAM",
            "TRASH",
        }
        for label in body.get("addLabelIds", []) + body.get("removeLabelIds", []):
            if label not in known:
                return Reply(*bad_request(f"Invalid label: {label}", "invalidArgument"))
        for m in found:
            labels = [x for x in m["labelIds"] if x not in body.get("removeLabelIds", [])]
            m["labelIds"] = labels + [x for x in body.get("addLabelIds", []) if x not in labels]
        return None

    def gmail_users_messages_modify(
        self, params: dict, multi: dict, raw: bytes, user: str, msg_id: str
    ) -> Reply:
        m = self.messages.get(msg_id)
        if m is None:
            return Reply(404, NOT_FOUND)
        return self._relabel([m], raw) or Reply(
            200, {"id": msg_id, "threadId": m["threadId"], "labelIds": m["labelIds"]}
        )

    def gmail_users_threads_modify(
        self, params: dict, multi: dict, raw: bytes, user: str, thread_id: str
    ) -> Reply:
        found = self._thread(thread_id)
        if not found:
            return Reply(404, NOT_FOUND)
        return self._relabel(found, raw) or Reply(
            200,
            {
                "id": thread_id,
                "messages": [
                    {"id": m["id"], "threadId": thread_id, "labelIds": m["labelIds"]} for m in found
                ],
            },
        )

    def gmail_users_drafts_create(self, params: dict, multi: dict, raw: bytes, user: str) -> Reply:
        body = json.loads(raw)
        message = body.get("message", {})
        encoded = message.get("raw") or ""
        try:
            if not re.fullmatch(r"[A-Za-z0-9_\-]*={0,2}", encoded):
                raise binascii.Error("not base64url")
            mime = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        except (binascii.Error, ValueError):
            return Reply(
                *bad_request(
                    "Invalid value at 'draft.message.raw' (TYPE_BYTES), Base64 decoding failed",
                    "invalidArgument",
                )
            )
        parsed = email.message_from_bytes(mime, policy=email.policy.default)
        number = len(self.drafts) + 1
        thread_id = f"t-draft-{number}"
        wanted = message.get("threadId")
        if wanted:
            thread = self._thread(wanted)
            if not thread:
                return Reply(404, NOT_FOUND)
            # Gmail's rule: a draft joins the thread only when it refers to a message of it
            # and its Subject matches.
            refs = msg_ids(mime)
            ids = {_headers_of(m).get("message-id", "") for m in thread}
            subject_ok = _bare_subject(str(parsed.get("Subject", ""))) == _bare_subject(
                _headers_of(thread[0]).get("subject", "")
            )
            if subject_ok and refs & ids:
                thread_id = wanted
        stored = {
            "id": f"r-{number}",
            "message": {
                "id": f"draft-msg-{number}",
                "threadId": thread_id,
                "labelIds": ["DRAFT"],
            },
            "raw": encoded,
        }
        self.drafts.append(stored)
        return Reply(200, {"id": stored["id"], "message": stored["message"]})

    # -- Calendar v3 ---------------------------------------------------------------------
    def _calendar(self, calendar: str) -> list[dict] | None:
        if calendar in ("primary", ME):
            return self.events
        return self.calendar_events.get(calendar)

    def _calendar_list(self) -> list[dict[str, Any]]:
        primary = {
            "kind": "calendar#calendarListEntry",
            "id": ME,
            "summary": ME,
            "timeZone": "Europe/Paris",
            "accessRole": "owner",
            "primary": True,
            "selected": True,
        }
        return [primary, *self.calendars]

    def calendar_calendarList_get(  # noqa: N802
        self, params: dict, multi: dict, raw: bytes, calendar: str
    ) -> Reply:
        wanted = ME if calendar == "primary" else calendar
        for entry in self._calendar_list():
            if entry["id"] == wanted:
                return Reply(200, entry)
        return Reply(404, error_body(404, "Not Found", "notFound", "NOT_FOUND"))

    def calendar_calendarList_list(self, params: dict, multi: dict, raw: bytes) -> Reply:  # noqa: N802
        entries = self._calendar_list()
        chunk, token = _page(entries, params, int(params.get("maxResults", 100)))
        body: dict[str, Any] = {"kind": "calendar#calendarList", "items": chunk}
        if token:
            body["nextPageToken"] = token
        return Reply(200, body)

    def calendar_events_list(self, params: dict, multi: dict, raw: bytes, calendar: str) -> Reply:
        events = self._calendar(calendar)
        if events is None:
            return Reply(404, error_body(404, "Not Found", "notFound", "NOT_FOUND"))
        if params.get("orderBy") == "startTime" and params.get("singleEvents") != "true":
            return Reply(
                *bad_request("The requested ordering is not available for the particular query.")
            )
        zone = ZoneInfo(params.get("timeZone", "UTC"))
        lo = datetime.fromisoformat(params["timeMin"]) if "timeMin" in params else None
        hi = datetime.fromisoformat(params["timeMax"]) if "timeMax" in params else None
        found = [
            e
            for e in events
            if (lo is None or _instant(e["end"], zone) > lo)
            and (hi is None or _instant(e["start"], zone) < hi)
        ]
        query = params.get("q", "").lower()
        if query:
            found = [
                e
                for e in found
                if query in (e.get("summary", "") + " " + e.get("description", "")).lower()
            ]
        found.sort(key=lambda e: _instant(e["start"], zone))
        size = int(params.get("maxResults", 250))
        if size > 2500:
            return Reply(*bad_request("Invalid value for maxResults."))
        # "The number of events in the resulting page may be less than this value, or
        # none at all, even if there are more events matching the query."
        chunk, token = _page(found, params, min(size, self.page_size_cap))
        body: dict[str, Any] = {
            "kind": "calendar#events",
            "summary": calendar,
            "timeZone": params.get("timeZone", "UTC"),
            "updated": datetime.now(UTC).isoformat(),
            "accessRole": "owner",
            "items": chunk,
        }
        if token:
            body["nextPageToken"] = token
        return Reply(200, body)

    def calendar_events_get(
        self, params: dict, multi: dict, raw: bytes, calendar: str, event_id: str
    ) -> Reply:
        events = self._calendar(calendar) or []
        for event in events:
            if event["id"] == event_id:
                return Reply(200, event)
        return Reply(404, error_body(404, "Not Found", "notFound", "NOT_FOUND"))

    def calendar_freebusy_query(self, params: dict, multi: dict, raw: bytes) -> Reply:
        """FreeBusyRequest/FreeBusyResponse: at most 50 calendars answered
        (``calendarExpansionMax``, "Maximum value is 50"), a group expanded into its
        members' calendars unless it has more than ``groupExpansionMax`` (at most 100),
        per-calendar ``errors`` with the documented reasons."""
        body = json.loads(raw or b"{}")
        if "timeMin" not in body or "timeMax" not in body:
            return Reply(*bad_request("Missing time range."))
        lo, hi = datetime.fromisoformat(body["timeMin"]), datetime.fromisoformat(body["timeMax"])
        zone = ZoneInfo(body.get("timeZone", "UTC"))
        calendar_max = min(int(body.get("calendarExpansionMax", 50)), 50)
        group_max = min(int(body.get("groupExpansionMax", 100)), 100)
        calendars: dict[str, Any] = {}
        groups: dict[str, Any] = {}
        wanted: list[str] = []
        for item in body.get("items", []):
            members = self.calendar_groups.get(item["id"])
            if members is None:
                wanted.append(item["id"])
            elif len(members) > group_max:
                groups[item["id"]] = {"errors": [_fb_error("groupTooBig")], "calendars": []}
            else:
                groups[item["id"]] = {"calendars": list(members)}
                wanted += members

        for number, calendar in enumerate(dict.fromkeys(wanted)):
            events = self._calendar(calendar)
            reason = (
                "tooManyCalendarsRequested"
                if number >= calendar_max
                else "internalError"
                if calendar in self.failing_calendars
                else "notFound"
                if events is None
                else ""
            )
            if reason:
                calendars[calendar] = {"errors": [_fb_error(reason)], "busy": []}
                continue
            busy = []
            for e in sorted(events or [], key=lambda e: _instant(e["start"], zone)):
                if e.get("status") == "cancelled" or e.get("transparency") == "transparent":
                    continue
                start, end = _instant(e["start"], zone), _instant(e["end"], zone)
                if end > lo and start < hi:
                    busy.append(
                        {
                            "start": max(start, lo)
                            .astimezone(UTC)
                            .isoformat()
                            .replace("+00:00", "Z"),
                            "end": min(end, hi).astimezone(UTC).isoformat().replace("+00:00", "Z"),
                        }
                    )
            calendars[calendar] = {"busy": busy}
        answer = {
            "kind": "calendar#freeBusy",
            "timeMin": body["timeMin"],
            "timeMax": body["timeMax"],
            "calendars": calendars,
        }
        if groups:
            answer["groups"] = groups
        return Reply(200, answer)


def _fb_error(reason: str) -> dict[str, str]:
    return {"domain": "global" if reason == "notFound" else "calendar", "reason": reason}


def _walk(part: dict) -> list[dict]:
    found = [part]
    for child in part.get("parts", []) or []:
        found += _walk(child)
    return found


def _instant(when: dict, zone: ZoneInfo) -> datetime:
    if "dateTime" in when:
        return datetime.fromisoformat(when["dateTime"])
    return datetime.fromisoformat(when["date"]).replace(tzinfo=zone)


def _page(items: list[Any], params: dict[str, str], size: int) -> tuple[list[Any], str | None]:
    """Google-style paging: the token is opaque to clients (here a base64 offset)."""
    token = params.get("pageToken")
    start = int(base64.b64decode(token).decode()[4:]) if token else 0
    chunk = items[start : start + size]
    more = start + size < len(items)
    return chunk, (base64.b64encode(f"off:{start + size}".encode()).decode() if more else None)


DRIVE_TERM = re.compile(r"fullText contains '((?:[^'\\]|\\.)*)'")


def drive_terms(q: str) -> list[str]:
    """The literal texts of every ``fullText contains '...'`` clause in a Drive query."""
    return [re.sub(r"\\(.)", r"\1", m) for m in DRIVE_TERM.findall(q)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one response = one quick reply, as from Google
    fake: FakeGoogle

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake = self.fake
        with fake._lock:
            fake.http_requests += 1
        if fake.latency:
            time.sleep(fake.latency)
        reply = fake.dispatch(method, self.path, headers, raw, in_batch=False)
        data = reply.data()
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")


def start(fake: FakeGoogle) -> ThreadingHTTPServer:
    handler = type("BoundHandler", (Handler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


def write_token(path: Path, fake: FakeGoogle, **override: Any) -> Path:
    """A token file as ``co google login`` saves it (granted scopes included)."""
    info = {
        "token": "good-token",
        "refresh_token": "good-refresh",
        "client_id": "cid.apps.googleusercontent.com",
        "client_secret": "csecret",
        "token_uri": f"{fake.url}/token",
        "scopes": sorted(FULL_GRANT),
        "expiry": "2099-01-01T00:00:00Z",
    }
    info.update(override)
    path.write_text(json.dumps(info), encoding="utf-8")
    path.chmod(0o600)
    return path
