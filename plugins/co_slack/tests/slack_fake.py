"""A local Slack Web API for tests: the real slack_sdk WebClient talks to it over HTTP.

It implements the methods co-slack uses with bodies shaped as in Slack's API reference
(https://docs.slack.dev/reference/methods/): ``ok: false`` + ``error`` on failure (HTTP
200, as Slack does), cursor pagination through ``response_metadata.next_cursor``,
``missing_scope`` with ``needed``/``provided``, and HTTP 429 with ``Retry-After``.
Every request is recorded so tests can assert what reached "Slack".
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "xoxb-1111-2222-s3cr3tT0kenValue"
ALL_SCOPES = {
    "channels:read",
    "groups:read",
    "channels:history",
    "groups:history",
    "users:read",
    "chat:write",
}
NEEDS = {
    "conversations.list": "channels:read",
    "conversations.history": "channels:history",
    "users.info": "users:read",
    "chat.postMessage": "chat:write",
}


def _channel(cid: str, name: str, *, member: bool = True, private: bool = False, **extra: Any):
    return {
        "id": cid,
        "name": name,
        "is_channel": not private,
        "is_group": private,
        "is_im": False,
        "is_mpim": False,
        "is_private": private,
        "created": 1449252889,
        "creator": "U012A3CDE",
        "is_archived": False,
        "is_general": name == "general",
        "name_normalized": name,
        "is_shared": False,
        "is_member": member,
        "topic": {"value": extra.pop("topic", ""), "creator": "", "last_set": 0},
        "purpose": {"value": extra.pop("purpose", ""), "creator": "", "last_set": 0},
        "previous_names": [],
        "num_members": extra.pop("num_members", 4),
        **extra,
    }


def _user(uid: str, name: str, real: str, display: str = "") -> dict[str, Any]:
    return {
        "id": uid,
        "team_id": "T012AB3C4",
        "name": name,
        "deleted": False,
        "real_name": real,
        "is_bot": False,
        "profile": {"real_name": real, "display_name": display, "team": "T012AB3C4"},
    }


@dataclass
class Request:
    method: str
    params: dict[str, Any]
    authorization: str | None


@dataclass
class FakeSlack:
    """The workspace "Acme" with a few channels, people and messages."""

    token: str = TOKEN
    scopes: set[str] = field(default_factory=lambda: set(ALL_SCOPES))
    channels: list[dict[str, Any]] = field(default_factory=list)
    history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # newest first
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    rate_limited: dict[str, int] = field(default_factory=dict)  # method -> 429s to send
    retry_after: int = 0
    _ts: int = 1700000100

    def __post_init__(self) -> None:
        if not self.channels:
            self.channels = [
                _channel("C0GENERAL1", "general", topic="Company-wide announcements"),
                _channel("C0RANDOM01", "random", num_members=3),
                _channel("C0DESIGN01", "design", member=False),
                _channel("G0SECRET01", "secret-plans", private=True),
                _channel("C0RELEASE1", "releases"),
            ]
        if not self.users:
            self.users = {
                "U0GRACE001": _user("U0GRACE001", "grace", "Grace Hopper", "grace"),
                "U0ADA00001": _user("U0ADA00001", "ada", "Ada Lovelace"),
            }
        if not self.history:
            self.history = {
                "C0GENERAL1": [
                    {
                        "type": "message",
                        "user": "U0ADA00001",
                        "text": "Thanks <@U0GRACE001>, see <#C0RANDOM01|random>",
                        "ts": "1700000040.000300",
                    },
                    {
                        "type": "message",
                        "user": "U0GRACE001",
                        "text": "Release train leaves Friday",
                        "ts": "1700000020.000200",
                        "thread_ts": "1700000020.000200",
                        "reply_count": 2,
                        "reply_users_count": 1,
                        "latest_reply": "1700000030.000250",
                        "reply_users": ["U0ADA00001"],
                    },
                    {
                        "type": "message",
                        "user": "U0ADA00001",
                        "text": "Good morning all",
                        "ts": "1700000010.000100",
                    },
                ],
                "C0RANDOM01": [],
            }

    @property
    def posted(self) -> list[Request]:
        return [r for r in self.requests if r.method == "chat.postMessage"]

    def calls(self, method: str) -> list[Request]:
        return [r for r in self.requests if r.method == method]

    # -- dispatch -----------------------------------------------------------------------

    def handle(
        self, method: str, params: dict[str, Any], authorization: str | None
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        self.requests.append(Request(method, params, authorization))
        if self.rate_limited.get(method, 0) > 0:
            self.rate_limited[method] -= 1
            return (
                429,
                {"Retry-After": str(self.retry_after)},
                {"ok": False, "error": "ratelimited"},
            )
        if not authorization:
            return 200, {}, {"ok": False, "error": "not_authed"}
        if authorization != f"Bearer {self.token}":
            return 200, {}, {"ok": False, "error": "invalid_auth"}
        needed = NEEDS.get(method)
        private = "private_channel" in str(params.get("types", ""))
        if method == "conversations.list" and private and needed in self.scopes:
            needed = "groups:read"
        if needed and needed not in self.scopes:
            return (
                200,
                {},
                {
                    "ok": False,
                    "error": "missing_scope",
                    "needed": needed,
                    "provided": ",".join(sorted(self.scopes)),
                },
            )
        handler = getattr(self, "do_" + method.replace(".", "_"), None)
        if handler is None:
            return 200, {}, {"ok": False, "error": "unknown_method"}
        return 200, {}, {"ok": True, **handler(params)}

    def _find(self, cid: str) -> dict[str, Any] | None:
        return next((c for c in self.channels if c["id"] == cid or c["name"] == cid), None)

    # -- methods ------------------------------------------------------------------------

    def do_auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": "https://acme.slack.com/",
            "team": "Acme",
            "user": "cobot",
            "team_id": "T012AB3C4",
            "user_id": "U0COBOT001",
            "bot_id": "B0COBOT001",
            "is_enterprise_install": False,
        }

    def do_conversations_list(self, params: dict[str, Any]) -> dict[str, Any]:
        types = str(params.get("types") or "public_channel").split(",")
        visible = [
            c
            for c in self.channels
            if ("private_channel" if c["is_private"] else "public_channel") in types
        ]
        limit = int(params.get("limit") or 100)
        start = 0
        if params.get("cursor"):
            try:
                start = int(base64.b64decode(params["cursor"]).decode().split(":")[1])
            except (ValueError, IndexError):
                raise _Error("invalid_cursor") from None
        page = visible[start : start + limit]
        end = start + limit
        next_cursor = (
            base64.b64encode(f"offset:{end}".encode()).decode() if end < len(visible) else ""
        )
        return {"channels": page, "response_metadata": {"next_cursor": next_cursor}}

    def do_conversations_history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._find(str(params.get("channel", "")))
        if channel is None:
            raise _Error("channel_not_found")
        if not channel["is_member"]:
            raise _Error("not_in_channel")
        messages = self.history.get(channel["id"], [])
        if params.get("oldest"):
            try:
                oldest = float(params["oldest"])
            except ValueError:
                raise _Error("invalid_ts_oldest") from None
            messages = [m for m in messages if float(m["ts"]) > oldest]
        limit = int(params.get("limit") or 100)
        return {
            "messages": messages[:limit],
            "has_more": len(messages) > limit,
            "pin_count": 0,
            "response_metadata": {"next_cursor": ""},
        }

    def do_users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = self.users.get(str(params.get("user")))
        if user is None:
            raise _Error("user_not_found")
        return {"user": user}

    def do_chat_postMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._find(str(params.get("channel", "")))
        if channel is None:
            raise _Error("channel_not_found")
        if not channel["is_member"]:
            raise _Error("not_in_channel")
        if channel["is_archived"]:
            raise _Error("is_archived")
        if not params.get("text"):
            raise _Error("no_text")
        self._ts += 1
        ts = f"{self._ts}.000100"
        message = {
            "type": "message",
            "subtype": "bot_message",
            "text": params["text"],
            "ts": ts,
            "username": "cobot",
            "bot_id": "B0COBOT001",
        }
        if params.get("thread_ts"):
            message["thread_ts"] = params["thread_ts"]
        self.history.setdefault(channel["id"], []).insert(0, message)
        return {"channel": channel["id"], "ts": ts, "message": message}

    def do_chat_getPermalink(self, params: dict[str, Any]) -> dict[str, Any]:
        cid, ts = str(params.get("channel")), str(params.get("message_ts"))
        if not any(m["ts"] == ts for m in self.history.get(cid, [])):
            raise _Error("message_not_found")
        return {
            "channel": cid,
            "permalink": f"https://acme.slack.com/archives/{cid}/p{ts.replace('.', '')}",
        }


class _Error(Exception):
    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def _serve(self) -> None:
        url = urlsplit(self.path)
        method = url.path.rsplit("/", 1)[-1]
        params: dict[str, Any] = {k: v[0] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if body:
            if "json" in (self.headers.get("Content-Type") or ""):
                params.update(json.loads(body))
            else:
                params.update({k: v[0] for k, v in parse_qs(body.decode()).items()})
        try:
            status, headers, payload = self.server.fake.handle(
                method, params, self.headers.get("Authorization")
            )
        except _Error as exc:
            status, headers, payload = 200, {}, {"ok": False, "error": exc.code}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeSlack


class SlackServer:
    """Runs a FakeSlack on 127.0.0.1 in a thread; ``base_url`` is what WebClient needs."""

    def __init__(self, fake: FakeSlack | None = None) -> None:
        self.fake = fake or FakeSlack()
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.fake = self.fake
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/api/"

    def __enter__(self) -> SlackServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
