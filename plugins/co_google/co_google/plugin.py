"""co-google's hooks: Drive, Gmail and Calendar."""

from __future__ import annotations

from typing import Any

from co_core import hookimpl


@hookimpl
def register_settings(register: Any) -> None:
    from co_google.settings import GoogleSettings

    register("google", GoogleSettings)
