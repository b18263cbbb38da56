"""The ``slack`` resource: one slack_sdk WebClient per session plus what it has learned.

slack_sdk is imported when the first call is made, never at import time. Every call goes
through :meth:`SlackConnection.call`, which turns Slack's failures into
:class:`~co_slack.errors.SlackProblem` (one sentence, no token, no URL with secrets).
HTTP 429 is retried by slack_sdk's ``RateLimitErrorRetryHandler``, which sleeps for the
``Retry-After`` the server sent.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from co_slack.errors import AUTH_ERRORS, SlackProblem, problem
from co_slack.settings import SlackSettings
from co_slack.token import TokenError, require

if TYPE_CHECKING:
    from slack_sdk import WebClient

    from co_core import Settings

CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{6,}$")
ALL_TYPES = "public_channel,private_channel"
PUBLIC_ONLY = "public_channel"
MAX_NAME_PAGES = 50
NAME_PAGE_SIZE = 200  # Slack's advice: at most 200 per page
log = logging.getLogger("co_slack")


def build_client(
    token: str,
    section: SlackSettings,
    *,
    timeout: int | None = None,
    rate_limit_retries: int | None = None,
    connection_retries: int = 1,
) -> WebClient:
    """A WebClient for ``section.base_url`` that honours 429 Retry-After."""
    from slack_sdk import WebClient
    from slack_sdk.http_retry.builtin_handlers import (
        ConnectionErrorRetryHandler,
        RateLimitErrorRetryHandler,
    )

    retries = section.rate_limit_retries if rate_limit_retries is None else rate_limit_retries
    handlers: list[Any] = []
    if connection_retries:
        handlers.append(ConnectionErrorRetryHandler(max_retry_count=connection_retries))
    if retries:
        handlers.append(RateLimitErrorRetryHandler(max_retry_count=retries))
    # slack_sdk sends through HTTPS_PROXY/HTTP_PROXY when set (and honours NO_PROXY).
    return WebClient(
        token=token,
        base_url=section.base_url,
        timeout=timeout or section.timeout,
        retry_handlers=handlers,
        logger=logging.getLogger("co_slack.sdk"),
    )


def call_api(
    client: WebClient, method: str, /, about: str | None = None, **params: Any
) -> dict[str, Any]:
    """``client.<method>(**params)`` as a dict, or a SlackProblem saying what to do."""
    from slack_sdk.errors import SlackApiError

    params = {k: v for k, v in params.items() if v is not None}
    try:
        response = getattr(client, method)(**params)
    except SlackApiError as exc:
        raise _api_problem(exc.response, about) from None
    except (OSError, ValueError) as exc:  # URLError, timeouts, refused connections
        reason = getattr(exc, "reason", None) or exc
        raise problem(
            "unreachable",
            {"detail": f"Slack could not be reached at {client.base_url} ({reason})."},
        ) from None
    return dict(response.data) if isinstance(response.data, dict) else {}


def _api_problem(response: Any, channel: str | None) -> SlackProblem:
    data = response.data if isinstance(response.data, dict) else {}
    if response.status_code == 429:
        headers = {k.lower(): v for k, v in (response.headers or {}).items()}
        retry_after = headers.get("retry-after")
        if isinstance(retry_after, list):
            retry_after = retry_after[0] if retry_after else None
        return problem("ratelimited", {"retry_after": retry_after})
    code = str(data.get("error") or f"http_{response.status_code}")
    return problem(code, data, channel)


class SlackConnection:
    """What tools share in one session: the client, user names, channel ids, page cursors."""

    def __init__(self, section: SlackSettings, token_source: str | None = None) -> None:
        self.section = section
        self.token_source = token_source
        self._client: WebClient | None = None
        self.user_names: dict[str, str] = {}
        self.channel_ids: dict[str, str] = {}  # name -> id
        self.channel_names: dict[str, str] = {}  # id -> name
        self.cursors: dict[int, str] = {1: ""}  # page -> cursor that fetches it
        self.types = ALL_TYPES

    def __repr__(self) -> str:
        return f"SlackConnection(base_url={self.section.base_url!r})"

    @property
    def client(self) -> WebClient:
        if self._client is None:
            try:
                token = require(self.section, self.token_source)
            except TokenError as exc:
                raise SlackProblem(
                    "not_connected", f"{exc}. Do not retry: tell the user how to connect Slack."
                ) from None
            self._client = build_client(token.value, self.section)
        return self._client

    def call(self, method: str, /, about: str | None = None, **params: Any) -> dict[str, Any]:
        """Call a WebClient method; ``about`` names the channel the user gave, for hints."""
        try:
            return call_api(self.client, method, about, **params)
        except SlackProblem as exc:
            if exc.code in AUTH_ERRORS:
                self._client = None  # after `co slack login` the next call uses the new token
            raise

    def close(self) -> None:
        self._client = None

    # -- channels ----------------------------------------------------------------------

    def list_page(self, cursor: str, limit: int | None = None) -> tuple[list[dict[str, Any]], str]:
        """One page of conversations.list: (channels, next_cursor or "")."""
        params = {
            "exclude_archived": True,
            "limit": limit or self.section.page_size,
            "cursor": cursor or None,
        }
        try:
            data = self.call("conversations_list", types=self.types, **params)
        except SlackProblem as exc:
            if exc.code != "missing_scope" or self.types == PUBLIC_ONLY:
                raise
            # No groups:read: private channels cannot be listed, public ones still can.
            log.info("listing public channels only (the app lacks groups:read)")
            self.types = PUBLIC_ONLY
            data = self.call("conversations_list", types=self.types, **params)
        channels = list(data.get("channels") or [])
        for item in channels:
            self.remember(item)
        next_cursor = (data.get("response_metadata") or {}).get("next_cursor") or ""
        return channels, next_cursor

    def channels_page(self, page: int) -> tuple[list[dict[str, Any]], bool]:
        """Page ``page`` (1-based) of the channel list and whether another follows."""
        start = max(p for p in self.cursors if p <= page)
        cursor = self.cursors[start]
        for current in range(start, page + 1):
            channels, next_cursor = self.list_page(cursor)
            if next_cursor:
                self.cursors[current + 1] = next_cursor
            if current == page:
                return channels, bool(next_cursor)
            if not next_cursor:
                return [], False  # asked for a page past the end
            cursor = next_cursor
        return [], False

    def remember(self, channel: dict[str, Any]) -> None:
        if channel.get("id") and channel.get("name"):
            self.channel_ids[str(channel["name"]).lower()] = channel["id"]
            self.channel_names[channel["id"]] = channel["name"]

    def channel_id(self, channel: str) -> str:
        """A channel id for a name (``general``, ``#general``) or an id (``C012AB3CD``)."""
        text = channel.strip()
        if CHANNEL_ID.match(text):
            return text
        name = text.lstrip("#").lower()
        if not name:
            raise problem("channel_not_found", {}, channel)
        if name in self.channel_ids:
            return self.channel_ids[name]
        cursor = ""
        for _ in range(MAX_NAME_PAGES):
            _channels, cursor = self.list_page(cursor, limit=NAME_PAGE_SIZE)
            if name in self.channel_ids:
                return self.channel_ids[name]
            if not cursor:
                break
        raise problem("channel_not_found", {}, channel)

    def label(self, channel_id: str) -> str:
        name = self.channel_names.get(channel_id)
        return f"#{name}" if name else channel_id

    # -- users -------------------------------------------------------------------------

    def user_name(self, user_id: str) -> str:
        """A person's display name via users.info, asked once per user per session."""
        if user_id not in self.user_names:
            try:
                user = self.call("users_info", user=user_id).get("user") or {}
            except SlackProblem as exc:
                if exc.code in AUTH_ERRORS or exc.code in ("not_connected", "unreachable"):
                    raise
                user = {}  # unknown user or no users:read scope: show the id
            profile = user.get("profile") or {}
            self.user_names[user_id] = (
                profile.get("display_name")
                or profile.get("real_name")
                or user.get("real_name")
                or user.get("name")
                or user_id
            )
        return self.user_names[user_id]


def make_connection(settings: Settings) -> SlackConnection:
    """The ``register_deps`` factory: cheap; nothing is imported or sent until a tool calls."""
    return SlackConnection(settings.section("slack"), settings.sources.get("slack.bot_token"))
