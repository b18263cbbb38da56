"""Two small plugins for the small-model tests: "office" (files, notes, a command that needs
a sandbox) and "mail" (needs a login). Their readiness comes from settings, as a real
plugin's comes from files."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from pydantic_ai import ModelRetry, RunContext

from co_core import CoDeps, SectionModel, hookimpl, setting
from co_core.kernel.app import App
from co_core.testing import use_plugin

NOTES = {"Wifi": "Password: Kalomi-417", "Dentist": "Appointment on 2031-04-02"}


class OfficeSettings(SectionModel):
    sandbox: bool = setting(True, help="whether run_command has a sandbox")


class MailSettings(SectionModel):
    token: str = setting("", help="the mail login")


def read_file(ctx: RunContext[CoDeps], path: str) -> str:
    """Read a text file of the workspace."""
    target = ctx.deps.workspace / path
    if not target.is_file():
        raise ModelRetry(f"no file {path!r}: list_files shows what exists")
    return target.read_text(encoding="utf-8")


def list_files(ctx: RunContext[CoDeps], path: str = ".") -> str:
    """List the files in a workspace folder."""
    return "\n".join(sorted(p.name for p in (ctx.deps.workspace / path).iterdir()))


def search_notes(ctx: RunContext[CoDeps], query: str) -> str:
    """Search the user's notes for words."""
    found = [f"{name}: {text}" for name, text in NOTES.items() if query.lower() in name.lower()]
    return "\n".join(found) or "no note matches"


def run_command(ctx: RunContext[CoDeps], cmd: str) -> str:
    """Run a shell command in the sandbox."""
    return f"ran {cmd}"


def broken(ctx: RunContext[CoDeps], what: str) -> str:
    """Do something that always fails."""
    raise ModelRetry(f"broken: {what}")


def list_emails(ctx: RunContext[CoDeps], label: str = "INBOX") -> str:
    """List the newest emails in the mailbox."""
    return "1 unread email"


def draft_email(ctx: RunContext[CoDeps], to: str, body: str) -> str:
    """Write an email draft."""
    return "drafted"


class Office:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register("office", OfficeSettings)

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(read_file, risk="read", permission="fs:read:{path}")
        register(list_files, risk="read", permission="fs:read:{path}")
        register(search_notes, risk="read", permission="notes:search")
        register(run_command, risk="read", permission="office:exec:{cmd}")
        register(broken, risk="read", permission="office:broken")

    @hookimpl
    def plugin_ready(self, settings: Any) -> dict[str, str] | None:
        if settings.section("office").sandbox:
            return None
        return {"run_command": "no sandbox: run `co config set office.sandbox true`"}


class Mail:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register("mail", MailSettings)

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(list_emails, risk="read", permission="mail:read")
        register(draft_email, risk="send", permission="mail:draft:{to}")

    @hookimpl
    def plugin_ready(self, settings: Any) -> str | None:
        if settings.section("mail").token:
            return None
        return "Mail is not signed in: run `co mail login`"


@contextmanager
def office_and_mail(
    settings: dict[str, Any] | None = None, cwd: Path | None = None
) -> Iterator[App]:
    """An app with both plugins registered (and no installed ones)."""
    with use_plugin(Office(), name="office", settings=settings or {}, cwd=cwd) as app:
        real = cast(App, app)
        real.host.register(Mail(), "mail")
        try:
            yield real
        finally:
            real.host.unregister("mail")
