"""``co status`` row: which Google credentials Co would use, and whether Google accepts them."""

from __future__ import annotations

from typing import Any

from co_core import CheckResult, fail, off, ok, warn
from co_google.auth import LOGIN_HINT, GoogleAuthProblem, find_credentials


def check_google(settings: Any) -> CheckResult:
    try:
        found = find_credentials(settings)
    except GoogleAuthProblem as exc:
        return fail(str(exc))
    if found is None:
        return off(f"not signed in: {LOGIN_HINT}")
    from co_google.services import GoogleApiError, GoogleServices

    google = GoogleServices(settings, _found=found)
    try:
        request = google.client("drive").about().get(fields="user(emailAddress)")
        about = google.execute(request, "drive")
    except GoogleApiError as exc:
        if exc.kind == "not_enabled":
            return warn(f"{found.source} works, but {exc}")
        return fail(f"{found.source}: {exc}")
    finally:
        google.close()
    who = about.get("user", {}).get("emailAddress", "unknown account")
    return ok(f"{found.source} — signed in as {who}")
