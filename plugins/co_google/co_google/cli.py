"""``co google login | logout | status`` (added to the ``co`` app by ``register_commands``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from co_core import current_app

if TYPE_CHECKING:
    from co_core import Settings

google_app = typer.Typer(
    help="Sign Co in to Google (Drive, Gmail drafts, Calendar) or out again.",
    no_args_is_help=True,
)


def _settings(ctx: typer.Context) -> Settings:
    return current_app(ctx).settings


@google_app.command("login")
def login_command(
    ctx: typer.Context,
    console: Annotated[
        bool,
        typer.Option(
            "--console",
            help="No browser here: print the address to open elsewhere and paste the result back.",
        ),
    ] = False,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Do not open a browser; print the address.")
    ] = False,
) -> None:
    """Sign in with your Google account (read-only Drive and Calendar; Gmail read, drafts, labels)."""
    from co_google.auth import SCOPE_USES, login

    path, missing = login(_settings(ctx), console=console, open_browser=not no_browser)
    print(f"Signed in. Token saved to {path} (readable only by you).")
    if missing:
        lost = ", ".join(SCOPE_USES[scope] for scope in missing)
        print(f"Not granted: {lost} will not work. Run `co google login` again to allow them.")


@google_app.command("logout")
def logout_command(ctx: typer.Context) -> None:
    """Forget the saved Google token (application-default credentials are left alone)."""
    from co_google.auth import logout

    path = logout(_settings(ctx))
    if path is None:
        print("No saved Google token; nothing to do.")
    else:
        print(f"Removed {path}. Revoke Co's access at https://myaccount.google.com/permissions.")


@google_app.command("status")
def status_command(ctx: typer.Context) -> None:
    """Say which Google credentials are in use and whether they work."""
    from co_google.status import check_google

    result = check_google(_settings(ctx))
    print(f"{result.state}: {result.detail}")
    if result.state == "fail":
        raise typer.Exit(1)
