"""``co slack login`` / ``co slack logout``: keep a bot token in Co's config dir (mode 0600)."""

from __future__ import annotations

import typer

from co_core import current_app


def add_commands(app: typer.Typer) -> None:
    slack_app = typer.Typer(help="Connect Co to Slack.", no_args_is_help=True)

    def fail(message: str) -> typer.Exit:
        typer.echo(f"co: error: {message}", err=True)
        return typer.Exit(1)

    @slack_app.command("login")
    def login(ctx: typer.Context) -> None:
        """Store a Slack bot token (xoxb-…) after checking it with Slack (auth.test).

        The token is typed without echo, or read from standard input when that is not
        a terminal (`co slack login < token.txt`).
        """
        import sys

        from co_core import CoError
        from co_slack import token as tokens
        from co_slack.errors import SlackProblem
        from co_slack.status import auth_test, who

        if sys.stdin.isatty():
            typer.echo("Paste the bot token from your Slack app's OAuth & Permissions page.")
            raw = typer.prompt("Slack bot token", hide_input=True, default="", show_default=False)
        else:  # `co slack login < token-file`: read it without prompting or echoing
            raw = sys.stdin.readline()
        try:
            value = tokens.check_format(raw)
            settings = current_app(ctx).settings
            auth = auth_test(value, settings, timeout=settings.section("slack").timeout)
        except SlackProblem as exc:
            raise fail(f"token not saved: {exc.code}: {exc}") from None
        except CoError as exc:
            raise fail(f"token not saved: {exc}") from None
        path = tokens.save(value)
        typer.echo(f"Connected to {who(auth)}. Token saved to {path} (mode 0600).")
        if settings.section("slack").bot_token is not None:
            source = settings.sources.get("slack.bot_token", "settings")
            typer.echo(f"Note: a token from {source} is set and takes precedence over this one.")

    @slack_app.command("logout")
    def logout() -> None:
        """Forget the token `co slack login` stored."""
        from co_slack import token as tokens

        path = tokens.token_file()
        if tokens.remove():
            typer.echo(f"Removed {path}.")
        else:
            typer.echo("No saved Slack token; nothing to remove.")

    app.add_typer(slack_app, name="slack")
