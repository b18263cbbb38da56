"""``co status`` row: which Google credentials Co would use, and whether Google accepts them.

The account is asked of the first API the login allows (Drive, then Gmail, then
Calendar): the consent screen lets people untick some, and a login without Drive still
works for mail and calendar; what was not allowed is named, with how to allow it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from co_core import CheckResult, fail, off, ok, warn
from co_google.auth import LOGIN_HINT, SCOPE_USES, SCOPES, GoogleAuthProblem, find_credentials

S = "https://www.googleapis.com/auth/"
# api, the scope its probe needs, the probe, where the answer names the account
PROBES: list[tuple[str, str, Callable[[Any], Any], Callable[[dict[str, Any]], Any]]] = [
    (
        "drive",
        S + "drive.readonly",
        lambda g: g.client("drive").about().get(fields="user(emailAddress)"),
        lambda r: r.get("user", {}).get("emailAddress"),
    ),
    (
        "gmail",
        S + "gmail.readonly",
        lambda g: g.client("gmail").users().getProfile(userId="me"),
        lambda r: r.get("emailAddress"),
    ),
    (
        "calendar",
        S + "calendar.readonly",
        lambda g: g.client("calendar").calendarList().get(calendarId="primary"),
        lambda r: r.get("id"),  # the primary calendar's id is the account's address
    ),
]


def check_google(settings: Any) -> CheckResult:
    try:
        found = find_credentials(settings)
    except GoogleAuthProblem as exc:
        return fail(str(exc))
    if found is None:
        return off(f"not signed in: {LOGIN_HINT}")
    from co_google.services import GoogleApiError, GoogleServices

    google = GoogleServices(settings, _found=found)
    notes: list[str] = []
    who = None
    try:
        for api, scope, make, read in PROBES:
            if google.lacks(scope):
                continue
            try:
                who = read(google.execute(make(google), api)) or "unknown account"
                break
            except GoogleApiError as exc:
                if exc.kind == "not_enabled":
                    notes.append(str(exc))
                elif exc.kind != "scope":  # scope: not granted after all, ask the next
                    return fail(f"{found.source}: {exc}")
        missing = [SCOPE_USES[scope] for scope in SCOPES if google.lacks(scope)]
    finally:
        google.close()
    if who is None:
        if notes:
            return warn(f"{found.source} works, but " + "; ".join(notes))
        return fail(
            f"{found.source}: the login allows none of Drive, Gmail or Calendar: "
            f"{LOGIN_HINT} again and allow them"
        )
    if missing:
        notes.append(
            f"not allowed at sign-in: {', '.join(missing)} ({LOGIN_HINT} again to allow them)"
        )
    detail = f"{found.source} — signed in as {who}"
    return warn(detail + "; " + "; ".join(notes)) if notes else ok(detail)
