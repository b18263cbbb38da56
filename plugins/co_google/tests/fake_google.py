"""A local stand-in for Google's REST APIs, speaking their documented wire format.

Just the endpoints Co uses: Drive v3 (files.list/get/export, about.get), Gmail v1
(labels.list, messages.list/get, drafts.create), Calendar v3 (events.list) and the OAuth
token endpoint. Bodies follow Google's API reference: opaque page tokens, MIME parts with
base64url bodies, all-day (``date``) and timed (``dateTime``) events, and Google's error
envelope (401 authError, 403 accessNotConfigured, 429 rateLimitExceeded). Every request
is recorded so tests can assert what reached "Google".
"""

from __future__ import annotations

import base64
import json
import re
import threading
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo


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
RATE_LIMITED = error_body(
    429, "Quota exceeded for quota metric 'Queries'.", "rateLimitExceeded", "RESOURCE_EXHAUSTED"
)


def gmail_message(
    msg_id: str,
    *,
    sender: str,
    to: str = "me@example.com",
    subject: str,
    date: str = "Fri, 20 Nov 2026 09:15:00 +0100",
    plain: str | None = None,
    html: str | None = None,
    attachment: tuple[str, str, bytes] | None = None,
    labels: tuple[str, ...] = ("INBOX",),
    thread_id: str | None = None,
) -> dict:
    """A Gmail ``users.messages`` resource in ``format=full``."""
    headers = [
        {"name": "From", "value": sender},
        {"name": "To", "value": to},
        {"name": "Subject", "value": subject},
        {"name": "Date", "value": date},
        {"name": "Message-ID", "value": f"<{msg_id}@mail.example.com>"},
    ]
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
    if attachment:
        name, mime, data = attachment
        top_parts.append(
            {
                "partId": "1",
                "mimeType": mime,
                "filename": name,
                "headers": [{"name": "Content-Type", "value": f'{mime}; name="{name}"'}],
                "body": {"attachmentId": "ANGjdJ_att1", "size": len(data)},
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


@dataclass
class FakeGoogle:
    """The server's state; tests fill it, then read ``requests`` and ``drafts``."""

    url: str = ""
    tokens: set[str] = field(default_factory=lambda: {"good-token"})
    refresh_tokens: set[str] = field(default_factory=lambda: {"good-refresh"})
    drive_files: dict[str, dict[str, Any]] = field(default_factory=dict)
    labels: list[dict[str, Any]] = field(default_factory=list)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    drafts: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    # path prefix -> responses (status, body) served before the real handler, one per request
    failures: dict[str, list[tuple[int, dict]]] = field(default_factory=dict)
    page_size_cap: int = 100
    code_exchanges: list[dict[str, str]] = field(default_factory=list)

    def fail(self, prefix: str, *responses: tuple[int, dict]) -> None:
        self.failures.setdefault(prefix, []).extend(responses)

    def reached(self, prefix: str, method: str | None = None) -> list[dict[str, Any]]:
        return [
            r
            for r in self.requests
            if r["path"].startswith(prefix) and (method is None or r["method"] == method)
        ]


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

    # -- plumbing --------------------------------------------------------------------
    def _send(
        self, status: int, body: Any, content_type: str = "application/json; charset=UTF-8"
    ) -> None:
        data = (
            body
            if isinstance(body, bytes)
            else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
        )
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        split = urllib.parse.urlsplit(self.path)
        path = split.path
        multi = urllib.parse.parse_qs(split.query)
        params = {k: v[-1] for k, v in multi.items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        record = {
            "method": method,
            "path": path,
            "params": params,
            "multi": multi,
            "body": raw,
            "auth": self.headers.get("Authorization", ""),
            "range": self.headers.get("Range"),
        }
        fake = self.fake
        fake.requests.append(record)
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
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        for prefix, queue in fake.failures.items():
            if path.startswith(prefix) and queue:
                status, body = queue.pop(0)
                return self._send(status, body)
        token = record["auth"].removeprefix("Bearer ")
        if token not in fake.tokens:
            return self._send(401, UNAUTHORIZED)
        for pattern, handler in ROUTES:
            match = re.fullmatch(pattern, path)
            if match and handler.__name__.startswith(method.lower()):
                return handler(self, params, multi, raw, *match.groups())
        self._send(404, error_body(404, f"No route {path}", "notFound", "NOT_FOUND"))

    def do_GET(self) -> None:  # noqa: N802
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    # -- OAuth ---------------------------------------------------------------------
    def _token(self, raw: bytes) -> None:
        form = {k: v[-1] for k, v in urllib.parse.parse_qs(raw.decode()).items()}
        fake = self.fake
        if form.get("grant_type") == "refresh_token":
            if form.get("refresh_token") not in fake.refresh_tokens:
                return self._send(
                    400,
                    {
                        "error": "invalid_grant",
                        "error_description": "Token has been expired or revoked.",
                    },
                )
            new = f"fresh-token-{len(fake.tokens)}"
            fake.tokens.add(new)
            return self._send(
                200,
                {
                    "access_token": new,
                    "expires_in": 3599,
                    "token_type": "Bearer",
                    "scope": form.get("scope", ""),
                },
            )
        if form.get("grant_type") == "authorization_code":
            fake.code_exchanges.append(form)
            if form.get("code") not in ("good-code", "partial-code"):
                return self._send(400, {"error": "invalid_grant", "error_description": "Bad code."})
            fake.tokens.add("login-token")
            fake.refresh_tokens.add("login-refresh")
            scopes = " ".join(
                [
                    "https://www.googleapis.com/auth/drive.readonly",
                    "https://www.googleapis.com/auth/gmail.readonly",
                    "https://www.googleapis.com/auth/gmail.compose",
                    "https://www.googleapis.com/auth/calendar.readonly",
                ]
            )
            if form["code"] == "partial-code":  # the user unticked Gmail compose
                scopes = scopes.replace(" https://www.googleapis.com/auth/gmail.compose", "")
            return self._send(
                200,
                {
                    "access_token": "login-token",
                    "refresh_token": "login-refresh",
                    "expires_in": 3599,
                    "token_type": "Bearer",
                    "scope": scopes,
                },
            )
        self._send(400, {"error": "unsupported_grant_type"})

    # -- Drive v3 ------------------------------------------------------------------
    def get_drive_list(self, params: dict, multi: dict, raw: bytes) -> None:
        terms = [t.lower() for t in drive_terms(params.get("q", ""))]
        found = [
            f
            for f in self.fake.drive_files.values()
            if all(t in f["name"].lower() or t in (f.get("text") or "").lower() for t in terms)
        ]
        size = min(int(params.get("pageSize", 100)), self.fake.page_size_cap)
        chunk, token = _page(found, params, size)
        body: dict[str, Any] = {
            "kind": "drive#fileList",
            "incompleteSearch": False,
            "files": [self._meta(f) for f in chunk],
        }
        if token:
            body["nextPageToken"] = token
        self._send(200, body)

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
        return meta

    def get_drive_file(self, params: dict, multi: dict, raw: bytes, file_id: str) -> None:
        f = self.fake.drive_files.get(file_id)
        if f is None:
            return self._send(
                404, error_body(404, f"File not found: {file_id}.", "notFound", "NOT_FOUND")
            )
        if params.get("alt") != "media":
            return self._send(200, self._meta(f))
        if "content" not in f:
            return self._send(
                403,
                error_body(
                    403,
                    "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
                    "fileNotDownloadable",
                    "PERMISSION_DENIED",
                ),
            )
        data: bytes = f["content"]
        wanted = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range") or "")
        if wanted:
            start, end = int(wanted.group(1)), int(wanted.group(2))
            part = data[start : end + 1]
            self.send_response(206)
            self.send_header("Content-Type", f["mimeType"])
            self.send_header("Content-Range", f"bytes {start}-{start + len(part) - 1}/{len(data)}")
            self.send_header("Content-Length", str(len(part)))
            self.end_headers()
            self.wfile.write(part)
            return
        self._send(200, data, f["mimeType"])

    def get_drive_export(self, params: dict, multi: dict, raw: bytes, file_id: str) -> None:
        f = self.fake.drive_files.get(file_id)
        if f is None:
            return self._send(404, error_body(404, "File not found.", "notFound", "NOT_FOUND"))
        exports = f.get("exports", {})
        wanted = params.get("mimeType", "")
        if wanted not in exports:
            return self._send(
                400,
                error_body(
                    400,
                    "The requested conversion is not supported.",
                    "badRequest",
                    "INVALID_ARGUMENT",
                ),
            )
        self._send(200, exports[wanted].encode(), wanted)

    def get_drive_about(self, params: dict, multi: dict, raw: bytes) -> None:
        self._send(200, {"user": {"emailAddress": "me@example.com", "displayName": "Me"}})

    # -- Gmail v1 ------------------------------------------------------------------
    def get_gmail_labels(self, params: dict, multi: dict, raw: bytes) -> None:
        self._send(200, {"labels": self.fake.labels})

    def get_gmail_list(self, params: dict, multi: dict, raw: bytes) -> None:
        found = list(self.fake.messages.values())
        for label in multi.get("labelIds", []):
            found = [m for m in found if label in m["labelIds"]]
        for term in params.get("q", "").lower().split():

            def matches(m: dict, term: str = term) -> bool:
                head = {h["name"].lower(): h["value"].lower() for h in m["payload"]["headers"]}
                if term.startswith("from:"):
                    return term[5:] in head.get("from", "")
                return term in head.get("subject", "") or term in m["snippet"].lower()

            found = [m for m in found if matches(m)]
        chunk, token = _page(found, params, int(params.get("maxResults", 100)))
        body: dict[str, Any] = {"resultSizeEstimate": len(found)}
        if chunk:
            body["messages"] = [{"id": m["id"], "threadId": m["threadId"]} for m in chunk]
        if token:
            body["nextPageToken"] = token
        self._send(200, body)

    def get_gmail_message(self, params: dict, multi: dict, raw: bytes, msg_id: str) -> None:
        m = self.fake.messages.get(msg_id)
        if m is None:
            return self._send(
                404, error_body(404, "Requested entity was not found.", "notFound", "NOT_FOUND")
            )
        if params.get("format") == "metadata":
            wanted = {h.lower() for h in multi.get("metadataHeaders", [])}
            headers = [h for h in m["payload"]["headers"] if h["name"].lower() in wanted]
            m = {**m, "payload": {"mimeType": m["payload"]["mimeType"], "headers": headers}}
        self._send(200, m)

    def post_gmail_draft(self, params: dict, multi: dict, raw: bytes) -> None:
        body = json.loads(raw)
        message = body.get("message", {})
        number = len(self.fake.drafts) + 1
        stored = {
            "id": f"r-{number}",
            "message": {
                "id": f"draft-msg-{number}",
                "threadId": message.get("threadId") or f"t-draft-{number}",
                "labelIds": ["DRAFT"],
            },
            "raw": message.get("raw"),
        }
        self.fake.drafts.append(stored)
        self._send(200, {"id": stored["id"], "message": stored["message"]})

    # -- Calendar v3 ---------------------------------------------------------------
    def get_calendar_events(self, params: dict, multi: dict, raw: bytes, calendar: str) -> None:
        zone = ZoneInfo(params.get("timeZone", "UTC"))

        def instant(when: dict) -> datetime:
            if "dateTime" in when:
                return datetime.fromisoformat(when["dateTime"])
            return datetime.fromisoformat(when["date"]).replace(tzinfo=zone)

        lo = datetime.fromisoformat(params["timeMin"]) if "timeMin" in params else None
        hi = datetime.fromisoformat(params["timeMax"]) if "timeMax" in params else None
        found = [
            e
            for e in self.fake.events
            if (lo is None or instant(e["end"]) > lo) and (hi is None or instant(e["start"]) < hi)
        ]
        query = params.get("q", "").lower()
        if query:
            found = [
                e
                for e in found
                if query in (e.get("summary", "") + " " + e.get("description", "")).lower()
            ]
        found.sort(key=lambda e: instant(e["start"]))
        chunk, token = _page(found, params, int(params.get("maxResults", 250)))
        body: dict[str, Any] = {
            "kind": "calendar#events",
            "summary": "me@example.com",
            "timeZone": params.get("timeZone", "UTC"),
            "updated": datetime.now(UTC).isoformat(),
            "accessRole": "owner",
            "items": chunk,
        }
        if token:
            body["nextPageToken"] = token
        self._send(200, body)


ROUTES = [
    (r"/drive/v3/files", Handler.get_drive_list),
    (r"/drive/v3/files/([^/]+)", Handler.get_drive_file),
    (r"/drive/v3/files/([^/]+)/export", Handler.get_drive_export),
    (r"/drive/v3/about", Handler.get_drive_about),
    (r"/gmail/v1/users/me/labels", Handler.get_gmail_labels),
    (r"/gmail/v1/users/me/messages", Handler.get_gmail_list),
    (r"/gmail/v1/users/me/messages/([^/]+)", Handler.get_gmail_message),
    (r"/gmail/v1/users/me/drafts", Handler.post_gmail_draft),
    (r"/calendar/v3/calendars/([^/]+)/events", Handler.get_calendar_events),
]


def start(fake: FakeGoogle) -> ThreadingHTTPServer:
    handler = type("BoundHandler", (Handler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


def write_token(path: Path, fake: FakeGoogle, **override: Any) -> Path:
    info = {
        "token": "good-token",
        "refresh_token": "good-refresh",
        "client_id": "cid.apps.googleusercontent.com",
        "client_secret": "csecret",
        "token_uri": f"{fake.url}/token",
        "scopes": [],
        "expiry": "2099-01-01T00:00:00Z",
    }
    info.update(override)
    path.write_text(json.dumps(info), encoding="utf-8")
    path.chmod(0o600)
    return path
