"""Which Google credentials Co uses, and how the user gets them.

Order: the token ``co google login`` saved (mode 0600 in Co's config dir), then
application-default credentials (``GOOGLE_APPLICATION_CREDENTIALS`` or the file
``gcloud auth application-default login`` writes; the GCE metadata server is never probed,
so nothing touches the network until a tool runs), then none.
Scopes are the least the tools need: Drive and Calendar read-only, Gmail read, compose
(drafts; Co has no tool that sends) and modify (labels, archive). The consent screen lets
people untick some: the token file keeps the scopes *granted*, and is loaded with them, so
a refresh never asks for more than the user allowed (Google refuses such a refresh).
google-auth is imported inside functions so this module stays cheap for ``co status``.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from co_core import CoError, config_dir, write_private

SCOPES = [
    "https://www.googleapis.com/auth/drive.readonly",
    "https://www.googleapis.com/auth/gmail.readonly",
    "https://www.googleapis.com/auth/gmail.compose",
    "https://www.googleapis.com/auth/gmail.modify",
    "https://www.googleapis.com/auth/calendar.readonly",
]
SCOPE_USES = {
    SCOPES[0]: "Drive tools",
    SCOPES[1]: "reading mail",
    SCOPES[2]: "draft_email",
    SCOPES[3]: "label_email",
    SCOPES[4]: "calendar tools",
}
TOKEN_FILE = "google-token.json"
# Loopback redirect for the console flow: nothing listens on port 1, so the browser shows
# an error page whose address (with the code in it) the user pastes back.
CONSOLE_REDIRECT = "http://localhost:1/"
LOGIN_HINT = "run `co google login`"


class GoogleAuthProblem(CoError):
    """Credentials are missing, unreadable, expired or revoked; the message says what to do."""


@dataclass
class Found:
    """Credentials plus where they came from (shown by ``co status``)."""

    credentials: Any
    source: str


def token_path(settings: Any) -> Path:
    section = settings.section("google")
    if section.token_path:
        return Path(section.token_path).expanduser()
    return config_dir() / TOKEN_FILE


def adc_path() -> Path | None:
    """The application-default credentials file, if any (files only: no metadata-server probe)."""
    named = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if named:
        return Path(named).expanduser()
    root = os.environ.get("CLOUDSDK_CONFIG")
    if root:
        folder = Path(root)
    elif os.name == "nt":
        folder = Path(os.environ.get("APPDATA", "~")) / "gcloud"
    else:
        folder = Path("~/.config/gcloud")
    path = folder.expanduser() / "application_default_credentials.json"
    return path if path.is_file() else None


def _load_adc(path: Path, settings: Any) -> Found:
    """Load an ADC file by its declared type (only the two types Co can use)."""
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        kind = info.get("type")
        if kind == "authorized_user":
            from google.oauth2.credentials import Credentials

            # No scopes: a refresh then gets what `gcloud auth application-default login`
            # was granted, instead of asking for more and being refused.
            creds = Credentials.from_authorized_user_info(info)
        elif kind == "service_account":
            from google.oauth2 import service_account

            creds = service_account.Credentials.from_service_account_info(info, scopes=SCOPES)
        else:
            raise ValueError(f"type {kind!r} is not supported (authorized_user, service_account)")
    except (OSError, ValueError, AttributeError) as exc:
        raise GoogleAuthProblem(
            f"application-default credentials {path} are unusable ({exc}); {LOGIN_HINT}"
        ) from exc
    return Found(_token_uri(creds, settings), f"application-default credentials {path}")


def _token_uri(creds: Any, settings: Any) -> Any:
    """Refresh against ``google.token_uri`` when set (google-auth pins Google's by default)."""
    uri = settings.section("google").token_uri
    if uri and hasattr(creds, "with_token_uri"):
        copy = creds.with_token_uri(uri)
        # The copy forgets when the access token expires; without it an expired token is
        # sent, refused (401), and only then refreshed.
        copy.expiry = getattr(creds, "expiry", None)
        return copy
    return creds


def find_credentials(settings: Any) -> Found | None:
    """The credentials to use, or None when there are none at all."""
    path = token_path(settings)
    if path.exists():
        from google.oauth2.credentials import Credentials

        try:
            if path.stat().st_mode & 0o077:  # someone loosened it: the token is a secret
                path.chmod(0o600)
            info = json.loads(path.read_text(encoding="utf-8"))
            # The scopes saved are those granted: loading them (not SCOPES) keeps a refresh
            # from asking for one the user unticked.
            creds = Credentials.from_authorized_user_info(info)
        except (OSError, ValueError) as exc:
            raise GoogleAuthProblem(
                f"the Google token {path} is unreadable ({exc}); {LOGIN_HINT}"
            ) from exc
        return Found(_token_uri(creds, settings), f"token {path}")
    adc = adc_path() if settings.section("google").use_adc else None
    if adc is not None:
        return _load_adc(adc, settings)
    return None


def require_credentials(settings: Any) -> Found:
    found = find_credentials(settings)
    if found is None:
        raise GoogleAuthProblem(f"Google is not set up: {LOGIN_HINT}")
    return found


def _client_secrets(settings: Any) -> Path:
    raw = settings.section("google").credentials_path
    if not raw:
        raise CoError(
            "set google.credentials_path (or GOOGLE_CREDENTIALS_PATH) to the OAuth client JSON "
            "of a Desktop app (Google Cloud console → APIs & Services → Credentials)"
        )
    path = Path(raw).expanduser()
    if not path.is_file():
        raise CoError(f"OAuth client file {path} does not exist (google.credentials_path)")
    return path


def _code_from(pasted: str, state: str) -> str:
    """Accept the whole redirect address (state checked) or just the code."""
    pasted = pasted.strip()
    if not pasted:
        raise CoError("no code given; login cancelled")
    if "://" not in pasted and "code=" not in pasted:
        return pasted
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(pasted).query or pasted)
    if "error" in query:
        raise CoError(f"Google refused the login: {query['error'][0]}")
    if query.get("state", [None])[0] != state:
        raise CoError("the pasted address is from another login attempt (state mismatch)")
    if "code" not in query:
        raise CoError("the pasted address has no code in it")
    return query["code"][0]


def login(
    settings: Any,
    *,
    console: bool = False,
    open_browser: bool = True,
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
    browser: str | None = None,
) -> tuple[Path, list[str]]:
    """Run the installed-app OAuth flow and save the token (0600).

    Returns the token path and the scopes the user did not grant (Google's consent screen
    lets people untick some); the CLI says which tools will not work without them.
    """
    from google_auth_oauthlib.flow import InstalledAppFlow

    try:
        flow = InstalledAppFlow.from_client_secrets_file(str(_client_secrets(settings)), SCOPES)
    except ValueError as exc:
        raise CoError(f"the OAuth client file is not a Desktop-app client JSON: {exc}") from exc
    relaxed = os.environ.get("OAUTHLIB_RELAX_TOKEN_SCOPE")
    os.environ["OAUTHLIB_RELAX_TOKEN_SCOPE"] = "1"  # partial consent is reported, not fatal
    try:
        if console:
            flow.redirect_uri = CONSOLE_REDIRECT
            url, state = flow.authorization_url(access_type="offline", prompt="consent")
            say("Open this address in a browser on any machine and allow access:")
            say(url)
            say("The browser then fails to load a localhost page; that is expected.")
            code = _code_from(ask("Paste the address it ended on (or just the code): "), state)
            flow.fetch_token(code=code)
            creds = flow.credentials
        else:
            creds = flow.run_local_server(
                port=0,
                open_browser=open_browser,
                browser=browser,
                access_type="offline",
                prompt="consent",
                timeout_seconds=300,
            )
    except CoError:
        raise
    except Exception as exc:  # oauthlib/requests errors: one line, no traceback
        raise CoError(f"Google login failed: {type(exc).__name__}: {exc}") from exc
    finally:
        if relaxed is None:
            os.environ.pop("OAUTHLIB_RELAX_TOKEN_SCOPE", None)
        else:
            os.environ["OAUTHLIB_RELAX_TOKEN_SCOPE"] = relaxed
    granted = _granted(creds)
    info = json.loads(creds.to_json())
    info["scopes"] = [scope for scope in SCOPES if scope in granted] + sorted(granted - set(SCOPES))
    path = token_path(settings)
    write_private(path, json.dumps(info))
    return path, [scope for scope in SCOPES if scope not in granted]


def _granted(creds: Any) -> set[str]:
    """The scopes Google's token response says were granted (all asked for if it is silent)."""
    granted = getattr(creds, "granted_scopes", None) or SCOPES
    if isinstance(granted, str):
        granted = granted.split()
    return set(granted)


def logout(settings: Any) -> Path | None:
    """Delete the saved token; returns its path, or None when there was none."""
    path = token_path(settings)
    if not path.exists():
        return None
    path.unlink()
    return path
