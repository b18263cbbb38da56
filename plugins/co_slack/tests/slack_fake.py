"""A local Slack Web API for tests: the real slack_sdk WebClient talks to it over HTTP.

It implements the methods co-slack uses with bodies shaped as in Slack's API reference
(https://docs.slack.dev/reference/methods/): ``ok: false`` + ``error`` on failure (HTTP
200, as Slack does), cursor pagination through ``response_metadata.next_cursor``,
``missing_scope`` with ``needed``/``provided``, and HTTP 429 with ``Retry-After``.

It is as strict as Slack where Co could get it wrong:

- ``conversations.history``/``replies``/``info`` take channel ids only (a name is
  ``channel_not_found``); each conversation type needs its own scope (``channels:``,
  ``groups:``, ``im:``);
- ``conversations.history`` pages as Slack documents it: "If there are more than 100
  messages between the two timestamps then the messages returned are the ones closest to
  latest ... If oldest is provided but not latest then the messages returned are those
  closest to oldest, allowing you to page forward through history"; each page lists its
  messages newest first, and a cursor continues in the same direction;
- ``max_page`` caps every page, as Slack does for apps outside the Marketplace (15 since
  2025), so a caller that does not follow ``next_cursor`` gets fewer messages than it asked;
- ``limited=True`` is such an app under Slack's 2025 limits for commercially distributed
  non-Marketplace apps: ``conversations.history`` and ``conversations.replies`` take 1
  request a minute each (a second is HTTP 429 with the seconds left in ``Retry-After``,
  on the fake's ``clock``), and ``limit`` is at most 15, 15 by default
  (https://docs.slack.dev/reference/methods/conversations.history);
- ``conversations.list`` pages over every conversation *before* filtering out archived
  ones and other types, so a page may be short or even empty while a cursor follows
  (Slack documents this);
- thread replies live in the thread (``conversations.replies``), not in the history;
- message text is escaped the way Slack stores it (``&lt;`` ``&gt;`` ``&amp;``);
- ``markdown_text`` cannot come with ``text`` (``markdown_text_conflict``, 12,000 chars);
- ``search.messages`` needs a user token (``not_allowed_token_type`` for a bot);
- a revoked token is ``token_revoked``; ``drop_after`` makes the server do the work and
  then cut the connection without answering, as a flaky network does.

Every request is recorded so tests can assert what reached "Slack".
"""

from __future__ import annotations

import base64
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "xoxb-1111-2222-s3cr3tT0kenValue"
USER_TOKEN = "xoxp-1111-3333-us3rT0kenValue"
ALL_SCOPES = {
    "channels:read",
    "groups:read",
    "im:read",
    "channels:history",
    "groups:history",
    "im:history",
    "im:write",
    "users:read",
    "users:read.email",
    "chat:write",
}
USER_SCOPES = {"search:read", "channels:read", "users:read"}
NEEDS = {
    "conversations.list": "channels:read",
    "users.info": "users:read",
    "users.list": "users:read",
    "users.lookupByEmail": "users:read.email",
    "chat.postMessage": "chat:write",
    "conversations.open": "im:write",
    "search.messages": "search:read",
}
KIND_SCOPES = {  # scope family per conversation kind
    "public": "channels",
    "private": "groups",
    "im": "im",
}
MARKDOWN_LIMIT = 12_000
LIMITED_METHODS = ("conversations.history", "conversations.replies")
LIMITED_PAGE = 15


def escape(text: str) -> str:
    """Text as Slack stores it: only &, < and > are escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


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
        "is_archived": extra.pop("archived", False),
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


def _user(
    uid: str, name: str, real: str, display: str = "", email: str = "", title: str = ""
) -> dict[str, Any]:
    profile = {"real_name": real, "display_name": display, "team": "T012AB3C4", "title": title}
    if email:
        profile["email"] = email
    return {
        "id": uid,
        "team_id": "T012AB3C4",
        "name": name,
        "deleted": False,
        "real_name": real,
        "tz": "Europe/Paris",
        "is_bot": False,
        "profile": profile,
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
    user_token: str = USER_TOKEN
    scopes: set[str] = field(default_factory=lambda: set(ALL_SCOPES))
    user_scopes: set[str] = field(default_factory=lambda: set(USER_SCOPES))
    revoked: bool = False
    revoked_user: bool = False  # the user token alone is revoked
    errors: dict[str, str] = field(default_factory=dict)  # method -> error code to answer
    channels: list[dict[str, Any]] = field(default_factory=list)
    history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # newest first
    threads: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)  # replies
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    ims: dict[str, str] = field(default_factory=dict)  # user id -> the bot's DM channel id
    requests: list[Request] = field(default_factory=list)
    rate_limited: dict[str, int] = field(default_factory=dict)  # method -> 429s to send
    retry_after: int = 0
    drop_after: dict[str, int] = field(default_factory=dict)  # method -> answers to drop
    max_page: int = 999  # the most items one page of history or replies holds
    limited: bool = False  # Slack's 2025 limits for non-Marketplace apps (see above)
    clock: Callable[[], float] = time.monotonic
    _last_read: dict[str, float] = field(default_factory=dict)  # method -> last accepted
    _ts: int = 1700000100
    _lock: threading.Lock = field(default_factory=threading.Lock)

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
                "U0GRACE001": _user(
                    "U0GRACE001",
                    "grace",
                    "Grace Hopper",
                    "grace",
                    email="grace@acme.test",
                    title="Rear Admiral",
                ),
                "U0ADA00001": _user("U0ADA00001", "ada", "Ada Lovelace", email="ada@acme.test"),
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
            self.threads[("C0GENERAL1", "1700000020.000200")] = [
                {
                    "type": "message",
                    "user": "U0ADA00001",
                    "text": "Which platform?",
                    "ts": "1700000025.000220",
                    "thread_ts": "1700000020.000200",
                    "parent_user_id": "U0GRACE001",
                },
                {
                    "type": "message",
                    "user": "U0ADA00001",
                    "text": "Never mind, platform 9 &amp; ¾",
                    "ts": "1700000030.000250",
                    "thread_ts": "1700000020.000200",
                    "parent_user_id": "U0GRACE001",
                },
            ]

    @property
    def posted(self) -> list[Request]:
        return [r for r in self.requests if r.method == "chat.postMessage"]

    def calls(self, method: str) -> list[Request]:
        return [r for r in self.requests if r.method == method]

    # -- dispatch -----------------------------------------------------------------------

    def handle(
        self, method: str, params: dict[str, Any], authorization: str | None
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        with self._lock:
            self.requests.append(Request(method, params, authorization))
            if self.rate_limited.get(method, 0) > 0:
                self.rate_limited[method] -= 1
                return (
                    429,
                    {"Retry-After": str(self.retry_after)},
                    {"ok": False, "error": "ratelimited"},
                )
            if self.limited and method in LIMITED_METHODS:
                now, last = self.clock(), self._last_read.get(method)
                if last is not None and now - last < 60:
                    wait = str(math.ceil(60 - (now - last)))
                    return 429, {"Retry-After": wait}, {"ok": False, "error": "ratelimited"}
                self._last_read[method] = now
        if not authorization:
            return 200, {}, {"ok": False, "error": "not_authed"}
        if authorization == f"Bearer {self.token}":
            scopes, kind = self.scopes, "bot"
        elif authorization == f"Bearer {self.user_token}":
            scopes, kind = self.user_scopes, "user"
        else:
            return 200, {}, {"ok": False, "error": "invalid_auth"}
        if self.revoked or (self.revoked_user and kind == "user"):
            return 200, {}, {"ok": False, "error": "token_revoked"}
        if method in self.errors:
            return 200, {}, {"ok": False, "error": self.errors[method]}
        if method == "search.messages" and kind != "user":
            return 200, {}, {"ok": False, "error": "not_allowed_token_type"}
        needed = NEEDS.get(method)
        private = "private_channel" in str(params.get("types", ""))
        if method == "conversations.list" and private and needed in scopes:
            needed = "groups:read"
        if needed and needed not in scopes:
            return 200, {}, _missing(needed, scopes)
        handler = getattr(self, "do_" + method.replace(".", "_"), None)
        if handler is None:
            return 200, {}, {"ok": False, "error": "unknown_method"}
        with self._lock:
            self._scopes = scopes
            return 200, {}, {"ok": True, **handler(params)}

    def _page_cap(self) -> int:
        return min(self.max_page, LIMITED_PAGE) if self.limited else self.max_page

    def _default_limit(self, usual: int) -> int:
        return LIMITED_PAGE if self.limited else usual

    def _conversation(self, cid: str, family: str) -> dict[str, Any]:
        """The conversation with id ``cid`` (ids only, as Slack), checking its scope."""
        for channel in self.channels:
            if channel["id"] == cid:
                kind = "private" if channel["is_private"] else "public"
                break
        else:
            user = next((u for u, d in self.ims.items() if d == cid), None)
            if user is None:
                raise _Error("channel_not_found")
            channel = {"id": cid, "is_im": True, "user": user, "is_member": True}
            kind = "im"
        needed = f"{KIND_SCOPES[kind]}:{family}"
        if needed not in self._scopes:
            raise _Error("missing_scope", needed=needed, provided=",".join(sorted(self._scopes)))
        return channel

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
        limit = int(params.get("limit") or 100)
        start = _offset(params.get("cursor"))
        window = self.channels[start : start + limit]
        end = start + limit
        # Slack pages first and filters after: a page can be short, even empty.
        page = [
            c
            for c in window
            if ("private_channel" if c["is_private"] else "public_channel") in types
            and not (_truthy(params.get("exclude_archived")) and c["is_archived"])
        ]
        next_cursor = _cursor(end) if end < len(self.channels) else ""
        return {"channels": page, "response_metadata": {"next_cursor": next_cursor}}

    def do_conversations_info(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._conversation(str(params.get("channel", "")), "read")
        return {"channel": channel}

    def do_conversations_history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._conversation(str(params.get("channel", "")), "history")
        if not channel["is_member"]:
            raise _Error("not_in_channel")
        oldest = _ts(params, "oldest")
        latest = _ts(params, "latest")
        inclusive = _truthy(params.get("inclusive"))
        newest_first = sorted(
            (
                m
                for m in self.history.get(channel["id"], [])
                if _within(float(m["ts"]), oldest, latest, inclusive)
            ),
            key=lambda m: float(m["ts"]),
            reverse=True,
        )
        # Only `oldest`: the page closest to oldest, and the cursor pages forward in time.
        forward = oldest is not None and latest is None
        walk = list(reversed(newest_first)) if forward else newest_first
        limit = min(int(params.get("limit") or self._default_limit(100)), self._page_cap())
        start = _offset(params.get("cursor"))
        chunk = walk[start : start + limit]
        more = start + limit < len(walk)
        return {
            "messages": sorted(chunk, key=lambda m: float(m["ts"]), reverse=True),
            "has_more": more,
            "pin_count": 0,
            "response_metadata": {"next_cursor": _cursor(start + limit) if more else ""},
        }

    def do_conversations_replies(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._conversation(str(params.get("channel", "")), "history")
        if not channel["is_member"]:
            raise _Error("not_in_channel")
        ts = str(params.get("ts", ""))
        parent = next((m for m in self.history.get(channel["id"], []) if m["ts"] == ts), None)
        if parent is None:
            raise _Error("thread_not_found")
        oldest = _ts(params, "oldest")
        latest = _ts(params, "latest")
        inclusive = _truthy(params.get("inclusive"))
        thread = [
            m
            for m in [parent, *self.threads.get((channel["id"], ts), [])]
            if _within(float(m["ts"]), oldest, latest, inclusive)
        ]
        limit = min(int(params.get("limit") or self._default_limit(1000)), self._page_cap())
        start = _offset(params.get("cursor"))
        page = thread[start : start + limit]
        more = start + limit < len(thread)
        return {
            "messages": page,
            "has_more": more,
            "response_metadata": {"next_cursor": _cursor(start + limit) if more else ""},
        }

    def do_conversations_open(self, params: dict[str, Any]) -> dict[str, Any]:
        users = str(params.get("users", "")).split(",")
        if len(users) != 1 or users[0] not in self.users:
            raise _Error("user_not_found")
        cid = self.ims.setdefault(users[0], "D0" + users[0][2:])
        return {"channel": {"id": cid}}

    def _visible_user(self, user: dict[str, Any]) -> dict[str, Any]:
        if "users:read.email" in self._scopes:
            return user
        profile = {k: v for k, v in user["profile"].items() if k != "email"}
        return {**user, "profile": profile}

    def do_users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = self.users.get(str(params.get("user")))
        if user is None:
            raise _Error("user_not_found")
        return {"user": self._visible_user(user)}

    def do_users_list(self, params: dict[str, Any]) -> dict[str, Any]:
        people = list(self.users.values())
        limit = int(params.get("limit") or 100)
        start = _offset(params.get("cursor"))
        more = start + limit < len(people)
        return {
            "members": [self._visible_user(u) for u in people[start : start + limit]],
            "response_metadata": {"next_cursor": _cursor(start + limit) if more else ""},
        }

    def do_users_lookupByEmail(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        wanted = str(params.get("email", "")).lower()
        for user in self.users.values():
            if user["profile"].get("email", "").lower() == wanted:
                return {"user": user}
        raise _Error("users_not_found")

    def do_search_messages(self, params: dict[str, Any]) -> dict[str, Any]:
        words = str(params.get("query", "")).lower().split()
        matches = []
        for cid, messages in self.history.items():
            channel = next((c for c in self.channels if c["id"] == cid), {"id": cid, "name": cid})
            for m in messages:
                if all(w in m["text"].lower() for w in words):
                    matches.append(
                        {
                            "iid": f"{cid}-{m['ts']}",
                            "channel": {"id": cid, "name": channel["name"]},
                            "user": m.get("user"),
                            "username": self.users.get(m.get("user", ""), {}).get("name", ""),
                            "text": m["text"],
                            "ts": m["ts"],
                            "permalink": f"https://acme.slack.com/archives/{cid}/p{m['ts'].replace('.', '')}",
                        }
                    )
        count = int(params.get("count") or 20)
        page = int(params.get("page") or 1)
        chunk = matches[(page - 1) * count : page * count]
        pages = max(1, -(-len(matches) // count))
        return {
            "query": params.get("query"),
            "messages": {
                "total": len(matches),
                "matches": chunk,
                "paging": {"count": count, "total": len(matches), "page": page, "pages": pages},
            },
        }

    def do_chat_postMessage(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        target = str(params.get("channel", ""))
        if target in self.users:  # a user id: the bot's DM with that person
            target = self.do_conversations_open({"users": target})["channel"]["id"]
        channel = next(
            (c for c in self.channels if target in (c["id"], c["name"], "#" + c["name"])), None
        )
        if channel is None and target in self.ims.values():
            channel = {"id": target, "is_member": True, "is_archived": False}
        if channel is None:
            raise _Error("channel_not_found")
        if not channel["is_member"]:
            raise _Error("not_in_channel")
        if channel["is_archived"]:
            raise _Error("is_archived")
        markdown = params.get("markdown_text")
        if markdown is not None and (params.get("text") or params.get("blocks")):
            raise _Error("markdown_text_conflict")
        if markdown is not None and len(markdown) > MARKDOWN_LIMIT:
            raise _Error("msg_too_long")
        text = markdown if markdown is not None else params.get("text")
        if not text:
            raise _Error("no_text")
        self._ts += 1
        ts = f"{self._ts}.000100"
        message = {
            "type": "message",
            "subtype": "bot_message",
            "text": escape(text),
            "ts": ts,
            "username": "cobot",
            "bot_id": "B0COBOT001",
        }
        if markdown is not None:
            message["blocks"] = [{"type": "markdown", "text": markdown}]
        thread_ts = params.get("thread_ts")
        if thread_ts:
            parent = next(
                (m for m in self.history.get(channel["id"], []) if m["ts"] == thread_ts), None
            )
            if parent is None:
                raise _Error("thread_not_found")
            message["thread_ts"] = thread_ts
            self.threads.setdefault((channel["id"], thread_ts), []).append(message)
            parent["reply_count"] = int(parent.get("reply_count") or 0) + 1
            parent["thread_ts"] = thread_ts
            parent["latest_reply"] = ts
        else:
            self.history.setdefault(channel["id"], []).insert(0, message)
        return {"channel": channel["id"], "ts": ts, "message": message}

    def do_chat_getPermalink(self, params: dict[str, Any]) -> dict[str, Any]:  # noqa: N802
        cid, ts = str(params.get("channel")), str(params.get("message_ts"))
        known = self.history.get(cid, []) + [
            m for (c, _t), replies in self.threads.items() if c == cid for m in replies
        ]
        if not any(m["ts"] == ts for m in known):
            raise _Error("message_not_found")
        return {
            "channel": cid,
            "permalink": f"https://acme.slack.com/archives/{cid}/p{ts.replace('.', '')}",
        }


def _missing(needed: str, scopes: set[str]) -> dict[str, Any]:
    return {
        "ok": False,
        "error": "missing_scope",
        "needed": needed,
        "provided": ",".join(sorted(scopes)),
    }


def _ts(params: dict[str, Any], name: str) -> float | None:
    value = params.get(name)
    if value in (None, ""):
        return None
    try:
        return float(value)
    except ValueError:
        raise _Error(f"invalid_ts_{name}") from None


def _within(ts: float, oldest: float | None, latest: float | None, inclusive: bool) -> bool:
    """Slack's time range: both ends excluded unless ``inclusive``."""
    if oldest is not None and (ts < oldest or (ts == oldest and not inclusive)):
        return False
    return latest is None or ts < latest or (ts == latest and inclusive)


def _truthy(value: Any) -> bool:
    return str(value).lower() in ("1", "true")


def _cursor(offset: int) -> str:
    return base64.b64encode(f"offset:{offset}".encode()).decode()


def _offset(cursor: Any) -> int:
    if not cursor:
        return 0
    try:
        return int(base64.b64decode(str(cursor)).decode().split(":")[1])
    except (ValueError, IndexError):
        raise _Error("invalid_cursor") from None


class _Error(Exception):
    def __init__(self, code: str, **extra: Any) -> None:
        super().__init__(code)
        self.code = code
        self.extra = extra


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
        fake = self.server.fake
        try:
            status, headers, payload = fake.handle(
                method, params, self.headers.get("Authorization")
            )
        except _Error as exc:
            status, headers, payload = 200, {}, {"ok": False, "error": exc.code, **exc.extra}
        with fake._lock:
            drop = fake.drop_after.get(method, 0) > 0
            if drop:
                fake.drop_after[method] -= 1
        if drop:  # the work is done, the answer never arrives
            self.close_connection = True
            return
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
