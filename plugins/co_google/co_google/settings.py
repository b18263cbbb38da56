"""co-google settings (section ``google``)."""

from __future__ import annotations

from co_core.settings import SectionModel, setting


class GoogleSettings(SectionModel):
    credentials_path: str | None = setting(
        None,
        env="GOOGLE_CREDENTIALS_PATH",
        help="OAuth client secrets JSON (for `co google login`)",
    )
    token_path: str | None = setting(
        None, help="where the login token is kept (default: config dir)"
    )
