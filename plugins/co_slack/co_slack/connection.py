"""The ``slack`` resource: one slack_sdk WebClient per session plus what it has learned.

slack_sdk is imported when the first call is made, never at import time. Every call goes
through :meth:`SlackConnection.call`, which turns Slack's failures into
:class:`~co_slack.errors.SlackProblem` (one sentence, no token, no URL with secrets).

Retries: an HTTP 429 is retried after its ``Retry-After`` when that is at most
``slack.max_wait`` seconds (longer waits are reported, not slept through, and the method
is not called again before then: Slack limits each method per workspace); a dropped
connection is retried for reads only, never for ``chat.postMessage``, which Slack may
already have posted.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from co_slack.errors import AUTH_ERRORS, SlackProblem, TokenUsed, problem
from co_slack.identity import Target, handle_of
from co_slack.settings import SlackSettings
from co_slack.token import SOURCE_LABELS, TokenError, require

if TYPE_CHECKING:
    from slack_sdk import WebClient

    from co_core import Settings

ALL_TYPES = "public_channel,private_channel"
PUBLIC_ONLY = "public_channel"
MAX_NAME_PAGES = 50
NAME_PAGE_SIZE = 200  # Slack's advice: at most 200 per page
NOT_RETRIED = ("chat.postMessage",)  # Slack may have acted before the connection dropped
log = logging.getLogger("co_slack")


def retry_after(response: Any) -> int | None:
    """The ``Retry-After`` seconds of an HTTP response, if it sent one."""
    for name, value in (response.headers or {}).items():
        if name.lower() == "retry-after":
            value = value[0] if isinstance(value, list) else value
            try:
                return int(float(value))
            except (TypeError, ValueError):
                return None
    return None


def _handlers(
    rate_limit_retries: int, connection_retries: int, max_wait: int, sleep: Callable[[float], None]
) -> list[Any]:
    from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler
    from slack_sdk.http_retry.handler import RetryHandler

    class ReadRetry(ConnectionErrorRetryHandler):
        """Retry after a dropped connection, except calls Slack may already have acted on."""

        def _can_retry(self, *, state: Any, request: Any, response: Any = None, error: Any = None):
            if request.url.rstrip("/").endswith(NOT_RETRIED):
                return False
            return super()._can_retry(state=state, request=request, response=response, error=error)

    class RateLimitRetry(RetryHandler):
        """Wait out a 429's Retry-After when it is short; a long one goes back to the model."""

        def _can_retry(self, *, state: Any, request: Any, response: Any = None, error: Any = None):
            if response is None or response.status_code != 429:
                return False
            return (retry_after(response) or 1) <= max_wait

        def prepare_for_next_attempt(
            self, *, state: Any, request: Any, response: Any = None, error: Any = None
        ) -> None:
            state.next_attempt_requested = True
            wait = retry_after(response) or 1
            log.warning("Slack is rate limiting Co: waiting %s s before trying again", wait)
            sleep(wait)
            state.increment_current_attempt()

    handlers: list[Any] = []
    if connection_retries:
        handlers.append(ReadRetry(max_retry_count=connection_retries))
    if rate_limit_retries:
        handlers.append(RateLimitRetry(max_retry_count=rate_limit_retries))
    return handlers


def build_client(
    token: str,
    section: SlackSettings,
    *,
    timeout: int | None = None,
    rate_limit_retries: int | None = None,
    connection_retries: int = 1,
    sleep: Callable[[float], None] = time.sleep,
) -> WebClient:
    """A WebClient for ``section.base_url`` with Co's retry rules."""
    from slack_sdk import WebClient

    retries = section.rate_limit_retries if rate_limit_retries is None else rate_limit_retries
    # slack_sdk sends through HTTPS_PROXY/HTTP_PROXY when set (and honours NO_PROXY).
    return WebClient(
        token=token,
        base_url=section.base_url,
        timeout=timeout or section.timeout,
        retry_handlers=_handlers(retries, connection_retries, section.max_wait, sleep),
        logger=logging.getLogger("co_slack.sdk"),
    )


def call_api(
    client: WebClient,
    method: str,
    /,
    about: str | None = None,
    max_wait: int | None = None,
    token: TokenUsed | None = None,
    **params: Any,
) -> dict[str, Any]:
    """``client.<method>(**params)`` as a dict, or a SlackProblem saying what to do."""
    from slack_sdk.errors import SlackApiError

    params = {k: v for k, v in params.items() if v is not None}
    try:
        response = getattr(client, method)(**params)
    except SlackApiError as exc:
        raise _api_problem(exc.response, about, max_wait, token) from None
    except (OSError, ValueError) as exc:  # URLError, timeouts, refused or dropped connections
        reason = getattr(exc, "reason", None) or exc
        # Refused or unresolvable: nothing was sent. Reset or timed out: Slack may have acted.
        lost = isinstance(reason, (ConnectionResetError, TimeoutError)) or not isinstance(
            reason, OSError
        )
        code = "connection_lost" if lost else "unreachable"
        raise problem(
            code,
            {"detail": f"Slack could not be reached at {client.base_url} ({reason})."},
        ) from None
    return dict(response.data) if isinstance(response.data, dict) else {}


def _api_problem(
    response: Any, channel: str | None, max_wait: int | None, token: TokenUsed | None
) -> SlackProblem:
    data = response.data if isinstance(response.data, dict) else {}
    if response.status_code == 429:
        return problem("ratelimited", {"retry_after": retry_after(response), "max_wait": max_wait})
    code = str(data.get("error") or f"http_{response.status_code}")
    return problem(code, data, channel, token)


class SlackConnection:
    """What tools share in one session: the clients, user names, channel ids, page cursors."""

    def __init__(
        self,
        section: SlackSettings,
        token_source: str | None = None,
        user_token_source: str | None = None,
    ) -> None:
        self.section = section
        self.token_source = token_source
        self.user_token_source = user_token_source
        self.sleep: Callable[[float], None] = time.sleep
        self.clock: Callable[[], float] = time.time
        self._client: WebClient | None = None
        self._user_client: WebClient | None = None
        self._bot = TokenUsed("bot")
        self.not_before: dict[str, float] = {}  # method -> when Slack takes it again
        self.user_names: dict[str, str] = {}  # id -> display name
        self.users: dict[str, dict[str, Any]] = {}  # id -> users.info's user
        self.infos: dict[str, dict[str, Any]] = {}  # channel id -> conversations.info's
        self.people: list[dict[str, Any]] | None = None  # users.list, once
        self.channel_ids: dict[str, str] = {}  # name -> id
        self.channel_names: dict[str, str] = {}  # id -> "#name" or "@handle"
        self.cursors: dict[int, str] = {1: ""}  # page -> cursor that fetches it
        # read_slack_channel's next pages: (channel, thread, oldest, page) -> where it goes on
        self.reads: dict[tuple[str, str, str, int], Any] = {}
        self.page_caps: dict[str, int] = {}  # method -> the most messages Slack gives a page
        self.types = ALL_TYPES

    def __repr__(self) -> str:
        return f"SlackConnection(base_url={self.section.base_url!r})"

    def _build(self, token: str) -> WebClient:
        return build_client(token, self.section, sleep=lambda seconds: self.sleep(seconds))

    @property
    def client(self) -> WebClient:
        if self._client is None:
            try:
                token = require(self.section, self.token_source)
            except TokenError as exc:
                raise SlackProblem("not_connected", f"{exc}.") from None
            self._bot = TokenUsed("bot", token.source)
            self._client = self._build(token.value)
        return self._client

    @property
    def user_token(self) -> TokenUsed:
        source = self.user_token_source or ""
        return TokenUsed("user", SOURCE_LABELS.get(source, source) or "slack.user_token")

    @property
    def user_client(self) -> WebClient:
        """A client with the user token (``slack.user_token``), for what bots may not do."""
        if self._user_client is None:
            secret = self.section.user_token
            value = secret.get_secret_value().strip() if secret is not None else ""
            if not value:
                raise SlackProblem(
                    "no_user_token",
                    "Searching Slack needs a user token (xoxp-…) with the search:read scope, "
                    "which `co slack login` does not store: set SLACK_USER_TOKEN or run "
                    "`co config set slack.user_token xoxp-…`.",
                )
            self._user_client = self._build(value)
        return self._user_client

    def call(
        self, method: str, /, about: str | None = None, as_user: bool = False, **params: Any
    ) -> dict[str, Any]:
        """Call a WebClient method; ``about`` names the channel the user gave, for hints.
        A method Slack asked Co to wait for is not called before then."""
        client = self.user_client if as_user else self.client
        wait = self.not_before.get(method, 0) - self.clock()
        if wait > 0:
            data = {"retry_after": math.ceil(wait), "max_wait": self.section.max_wait}
            raise problem("ratelimited", data)
        token = self.user_token if as_user else self._bot
        try:
            return call_api(client, method, about, self.section.max_wait, token, **params)
        except SlackProblem as exc:
            if exc.code in AUTH_ERRORS:  # after `co slack login` the next call uses the new token
                if as_user:
                    self._user_client = None
                else:
                    self._client = None
            if exc.code == "ratelimited" and exc.retry_after:
                self.not_before[method] = self.clock() + exc.retry_after
            raise

    def close(self) -> None:
        self._client = None
        self._user_client = None

    # -- channels ----------------------------------------------------------------------

    def list_page(self, cursor: str, limit: int | None = None) -> tuple[list[dict[str, Any]], str]:
        """One call of conversations.list: (channels, next_cursor or ""). Slack may answer
        with fewer channels than asked for, even none, and still a cursor."""
        params: dict[str, Any] = {
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

    def _fill(self, cursor: str) -> tuple[list[dict[str, Any]], str]:
        """Channels from ``cursor`` on, following short pages until a page's worth."""
        found: list[dict[str, Any]] = []
        for _ in range(MAX_NAME_PAGES):
            channels, cursor = self.list_page(cursor)
            found += channels
            if len(found) >= self.section.page_size or not cursor:
                break
        return found, cursor

    def channels_page(self, page: int) -> tuple[list[dict[str, Any]], bool]:
        """Page ``page`` (1-based) of the channel list and whether another follows."""
        start = max(p for p in self.cursors if p <= page)
        cursor = self.cursors[start]
        for current in range(start, page + 1):
            channels, next_cursor = self._fill(cursor)
            if next_cursor:
                self.cursors[current + 1] = next_cursor
            if current == page:
                return channels, bool(next_cursor)
            if not next_cursor:
                return [], False  # asked for a page past the end
            cursor = next_cursor
        return [], False

    def remember(self, channel: dict[str, Any]) -> None:
        """A listed channel: its name, id and details (a listing answers conversations.info)."""
        if channel.get("id") and channel.get("name"):
            self.channel_ids[str(channel["name"]).lower()] = channel["id"]
            self.channel_names[channel["id"]] = f"#{channel['name']}"
            self.infos.setdefault(channel["id"], channel)

    def channel_named(self, name: str, about: str) -> str:
        """The id of the channel called ``name`` (lower-case), from the channel list."""
        if not name:
            raise problem("channel_not_found", {}, about)
        if name in self.channel_ids:
            return self.channel_ids[name]
        cursor = ""
        for _ in range(MAX_NAME_PAGES):
            _channels, cursor = self.list_page(cursor, limit=NAME_PAGE_SIZE)
            if name in self.channel_ids:
                return self.channel_ids[name]
            if not cursor:
                break
        raise problem("channel_not_found", {}, about)

    def conversation_info(self, channel_id: str, about: str) -> dict[str, Any]:
        """conversations.info for an id, asked once per session. Without the scope to
        ask, the id stands for its own name."""
        known = self.infos.get(channel_id)
        if known is None:
            try:
                data = self.call("conversations_info", about=about, channel=channel_id)
                known = dict(data.get("channel") or {})
            except SlackProblem as exc:
                if exc.code != "missing_scope":
                    raise
                known = {"id": channel_id}
            self.infos[channel_id] = known
            self.remember(known)
        return known

    def conversation(self, target: Target) -> str:
        """The id to read or post to: the channel's, or the bot's DM with the person."""
        if target.kind == "channel":
            self.channel_names.setdefault(target.id, target.label)
            return target.id
        return self.dm_id(target.id)

    def label(self, channel_id: str) -> str:
        return self.channel_names.get(channel_id, channel_id)

    # -- people ------------------------------------------------------------------------

    def _user(self, user_id: str) -> dict[str, Any]:
        try:
            return self.call("users_info", user=user_id).get("user") or {}
        except SlackProblem as exc:
            if exc.code in AUTH_ERRORS or exc.code in ("not_connected", "unreachable"):
                raise
            return {}  # unknown user or no users:read scope: show the id

    def _learn(self, user: dict[str, Any]) -> None:
        user_id = str(user.get("id", ""))
        profile = user.get("profile") or {}
        self.user_names[user_id] = (
            profile.get("display_name")
            or profile.get("real_name")
            or user.get("real_name")
            or user.get("name")
            or user_id
        )
        self.users[user_id] = user

    def user(self, user_id: str) -> dict[str, Any]:
        """users.info's answer for a person, asked once per session ({} if Slack does
        not say)."""
        if user_id not in self.users:
            found = self._user(user_id)
            if not found:
                return {}
            self._learn(found)
        return self.users[user_id]

    def user_name(self, user_id: str) -> str:
        """A person's display name, asked once per user per session."""
        if user_id not in self.user_names and not self.user(user_id):
            self.user_names[user_id] = user_id
        return self.user_names[user_id]

    def everyone(self) -> list[dict[str, Any]]:
        """The workspace's people (users.list, all pages), listed once per session."""
        if self.people is None:
            people: list[dict[str, Any]] = []
            cursor = ""
            for _ in range(MAX_NAME_PAGES):
                data = self.call("users_list", limit=NAME_PAGE_SIZE, cursor=cursor or None)
                people += [u for u in data.get("members") or [] if not u.get("deleted")]
                cursor = (data.get("response_metadata") or {}).get("next_cursor") or ""
                if not cursor:
                    break
            for user in people:
                self._learn(user)
            self.people = people
        return self.people

    def dm_id(self, user_id: str) -> str:
        """The id of the bot's direct-message conversation with a person (opened if new)."""
        data = self.call("conversations_open", users=user_id)
        channel_id = str((data.get("channel") or {}).get("id", ""))
        user = self.user(user_id)
        self.channel_names[channel_id] = "@" + handle_of(user) if user else user_id
        return channel_id


def make_connection(settings: Settings) -> SlackConnection:
    """The ``register_deps`` factory: cheap; nothing is imported or sent until a tool calls."""
    return SlackConnection(
        settings.section("slack"),
        settings.sources.get("slack.bot_token"),
        settings.sources.get("slack.user_token"),
    )
