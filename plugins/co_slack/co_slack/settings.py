"""co-slack settings (section ``slack``)."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import SecretStr, field_validator

from co_core import SectionModel, setting

DEFAULT_BASE_URL = "https://slack.com/api/"
LOOPBACK = {"localhost", "127.0.0.1", "::1"}


class SlackSettings(SectionModel):
    bot_token: SecretStr | None = setting(
        None, env="SLACK_BOT_TOKEN", help="Slack bot token (xoxb-…); or run `co slack login`"
    )
    base_url: str = setting(
        DEFAULT_BASE_URL,
        env="CO_SLACK_BASE_URL",
        help="Slack Web API base URL (a local test server, or a proxy you run)",
    )
    page_size: int = setting(
        100, env="CO_SLACK_PAGE_SIZE", ge=1, le=1000, help="channels per list_slack_channels page"
    )
    rate_limit_retries: int = setting(
        2,
        env="CO_SLACK_RATE_LIMIT_RETRIES",
        ge=0,
        le=10,
        help="times a rate-limited call (HTTP 429) is retried after Retry-After",
    )
    max_wait: int = setting(
        10,
        env="CO_SLACK_MAX_WAIT",
        ge=0,
        le=300,
        help="longest Retry-After Co waits on a rate limit, in seconds (longer: it tells the model)",
    )
    timeout: int = setting(30, env="CO_SLACK_TIMEOUT", ge=1, le=300, help="seconds per request")
    user_token: SecretStr | None = setting(
        None,
        env="SLACK_USER_TOKEN",
        help="optional Slack user token (xoxp-…) with search:read, for search_slack",
    )

    @field_validator("base_url")
    @classmethod
    def _safe_base_url(cls, value: str) -> str:
        """The token travels with every request: plain http only to this machine."""
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL such as https://slack.com/api/")
        if parts.scheme == "http" and parts.hostname not in LOOPBACK:
            raise ValueError("must use https (plain http is allowed only for localhost)")
        return value if value.endswith("/") else value + "/"
