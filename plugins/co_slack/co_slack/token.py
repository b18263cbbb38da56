"""Where the Slack token comes from: settings (file or SLACK_BOT_TOKEN), else `co slack login`.

The login file lives in Co's config dir with mode 0600; one readable by anyone else is
refused (like ssh does with keys) rather than silently used.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from co_core import CoError, config_dir, write_private

if TYPE_CHECKING:
    from co_slack.settings import SlackSettings

TOKEN_FILE = "slack-token"
SOURCE_LABELS = {"file": "settings.json", "project": "the project's .co/settings.json"}


class TokenError(CoError):
    """No usable token; the message says what to do."""


@dataclass(frozen=True)
class Token:
    value: str
    source: str  # "settings", "SLACK_BOT_TOKEN" or the login file path

    def __repr__(self) -> str:  # never print the secret by accident
        return f"Token(source={self.source!r})"


def token_file() -> Path:
    return config_dir() / TOKEN_FILE


def check_format(value: str) -> str:
    """A token as typed or pasted: stripped, one word, not empty."""
    value = value.strip()
    if not value:
        raise TokenError("no token given")
    if any(ch.isspace() for ch in value) or not value.isprintable():
        raise TokenError(
            "a Slack token is one word (xoxb-…); this has spaces or control characters"
        )
    return value


def read_saved() -> str | None:
    path = token_file()
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TokenError(
            f"{path} is readable by other users; refusing to use it "
            f"(run `chmod 600 {path}` or `co slack login` again)"
        )
    text = path.read_text(encoding="utf-8").strip()
    return text or None


def resolve(section: SlackSettings, source: str | None = None) -> Token | None:
    """The token to use, or None when Slack is not set up.

    ``source`` is where settings found ``slack.bot_token`` (``Settings.sources``).
    """
    if section.bot_token is not None and section.bot_token.get_secret_value().strip():
        label = SOURCE_LABELS.get(source or "", source or "settings")
        return Token(section.bot_token.get_secret_value().strip(), label)
    saved = read_saved()
    if saved:
        return Token(saved, str(token_file()))
    return None


def require(section: SlackSettings, source: str | None = None) -> Token:
    token = resolve(section, source)
    if token is None:
        raise TokenError("Slack is not connected: run `co slack login` or set SLACK_BOT_TOKEN")
    return token


def save(value: str) -> Path:
    path = token_file()
    write_private(path, value + "\n")
    return path


def remove() -> bool:
    try:
        token_file().unlink()
    except FileNotFoundError:
        return False
    return True
