"""co-google settings (section ``google``)."""

from __future__ import annotations

from pydantic import field_validator

from co_core import SectionModel, setting


class GoogleSettings(SectionModel):
    credentials_path: str | None = setting(
        None,
        env="GOOGLE_CREDENTIALS_PATH",
        help="OAuth client secrets JSON (for `co google login`)",
    )
    token_path: str | None = setting(
        None, help="where the login token is kept (default: config dir)"
    )
    use_adc: bool = setting(
        True,
        env="CO_GOOGLE_USE_ADC",
        help="fall back to application-default credentials (gcloud auth application-default login)",
    )
    api_endpoint: str | None = setting(
        None,
        env="CO_GOOGLE_API_ENDPOINT",
        help="root URL of the Google APIs (default: Google's own; tests point it at a local server)",
    )
    token_uri: str | None = setting(
        None,
        env="CO_GOOGLE_TOKEN_URI",
        help="OAuth token endpoint used to refresh the saved login (default: Google's)",
    )
    time_zone: str | None = setting(
        None,
        env="CO_GOOGLE_TIME_ZONE",
        help="IANA time zone for calendar days, e.g. Europe/Paris (default: this machine's)",
    )
    max_chars: int = setting(
        20000, ge=100, help="longest file or email body handed to the model, in characters"
    )
    retries: int = setting(
        4, ge=0, le=10, help="times a rate-limited (429) or failing (5xx) request is retried"
    )
    retry_delay: float = setting(
        1.0, ge=0, le=60, help="first back-off delay in seconds; doubles on each retry"
    )

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(
                    f"{value!r} is not an IANA time zone (e.g. Europe/Paris)"
                ) from None
        return value
