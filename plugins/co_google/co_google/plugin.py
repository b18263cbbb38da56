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
        Does,
        ResourceRegister,
        Role,
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
    drive, gmail, calendar = f"{TOOLS}.drive", f"{TOOLS}.gmail", f"{TOOLS}.calendar"

    def reads(path: str, permission: str, does: Does, roles: dict[str, Role]) -> None:
        register(path, risk="read", permission=permission, does=does, roles=roles)

    query: dict[str, Role] = {"query": "query"}
    email: dict[str, Role] = {"email_id": "target"}
    reads(f"{drive}:search_drive", "google:drive:read", "searches", query)
    reads(f"{drive}:read_drive_file", "google:drive:read", "reads", {"file_id": "target"})
    reads(f"{gmail}:list_emails", "gmail:read", "lists", {"label": "target"})
    reads(f"{gmail}:search_emails", "gmail:read", "searches", query)
    reads(f"{gmail}:read_email", "gmail:read", "reads", email)
    reads(
        f"{gmail}:read_email_attachment",
        "gmail:read",
        "reads",
        {"email_id": "target", "attachment": "target"},
    )
    register(  # one key per recipient (co_google.targets)
        f"{gmail}:draft_email",
        risk="send",
        permission="gmail:draft:{to}",
        retries=1,
        resolve="co_google.targets:draft",
        does="sends",
        roles={"to": "target", "body": "text", "subject": "text"},
    )
    register(
        f"{gmail}:label_email",
        risk="write",
        permission="gmail:label",
        resolve="co_google.targets:labels",
        does="writes",
        roles={"email_id": "target", "add": "text", "remove": "text"},
    )
    when: dict[str, Role] = {"start": "query", "end": "query", "calendar": "target"}
    reads(f"{calendar}:list_calendar_events", "calendar:read", "lists", when)
    reads(
        f"{calendar}:search_calendar_events",
        "calendar:read",
        "searches",
        {"query": "query", **when},
    )
    reads(f"{calendar}:read_calendar_event", "calendar:read", "reads", {"event_id": "target"})
    reads(
        f"{calendar}:free_busy",
        "calendar:read",
        "reads",
        {"start": "query", "end": "query", "people": "target"},
    )


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
