"""co-google's hooks: Drive, Gmail and Calendar.

Nothing heavy is imported here: tools are named by path, the ``google`` resource and the
status check import google-auth / googleapiclient only when they run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from co_core import hookimpl
from co_google.keys import GOOGLE

if TYPE_CHECKING:
    import typer

    from co_core import (
        ResourceRegister,
        Settings,
        SettingsRegister,
        StatusCheckRegister,
        ToolRegister,
    )

TOOLS = "co_google.tools"


@hookimpl
def register_settings(register: SettingsRegister) -> None:
    from co_google.settings import GoogleSettings

    register("google", GoogleSettings)


@hookimpl
def register_tools(register: ToolRegister) -> None:
    register(f"{TOOLS}.drive:search_drive", risk="read", permission="google:drive:read")
    register(f"{TOOLS}.drive:read_drive_file", risk="read", permission="google:drive:read")
    register(f"{TOOLS}.gmail:list_emails", risk="read", permission="gmail:read")
    register(f"{TOOLS}.gmail:search_emails", risk="read", permission="gmail:read")
    register(f"{TOOLS}.gmail:read_email", risk="read", permission="gmail:read")
    register(f"{TOOLS}.gmail:read_email_attachment", risk="read", permission="gmail:read")
    register(  # one key per recipient (co_google.targets)
        f"{TOOLS}.gmail:draft_email",
        risk="send",
        permission="gmail:draft:{to}",
        retries=1,
        resolve="co_google.targets:draft",
    )
    register(
        f"{TOOLS}.gmail:label_email",
        risk="write",
        permission="gmail:label",
        resolve="co_google.targets:labels",
    )
    register(f"{TOOLS}.calendar:list_calendar_events", risk="read", permission="calendar:read")
    register(f"{TOOLS}.calendar:search_calendar_events", risk="read", permission="calendar:read")
    register(f"{TOOLS}.calendar:read_calendar_event", risk="read", permission="calendar:read")
    register(f"{TOOLS}.calendar:free_busy", risk="read", permission="calendar:read")


@hookimpl
def register_deps(register: ResourceRegister) -> None:
    from co_google.services import make_services

    register(GOOGLE, make_services)


@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    from co_google.status import check_google

    register("google", check_google, timeout=5)


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from co_google.cli import google_app

    app.add_typer(google_app, name="google")


@hookimpl
def plugin_ready(settings: Settings) -> str | None:
    # Files only: a saved token or application-default credentials; no network here.
    from co_google.auth import LOGIN_HINT, adc_path, token_path
    from co_google.settings import GoogleSettings

    if token_path(settings).exists():
        return None
    if settings.section(GoogleSettings).use_adc and adc_path() is not None:
        return None
    return f"Google (Drive, Gmail, Calendar) is not signed in: {LOGIN_HINT}"


@hookimpl
def system_instructions(settings: Settings) -> str | None:
    return (
        "Google: draft_email only creates a draft for the user to send; to answer an email "
        "pass its id as reply_to_id. Calendar dates are YYYY-MM-DD."
    )
