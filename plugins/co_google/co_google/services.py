"""The ``google`` resource: Drive, Gmail and Calendar clients built on first use.

Clients come from the discovery documents shipped inside google-api-python-client
(``static_discovery=True``), so building one needs no network. ``api_endpoint`` replaces
Google's root URL for every API (each keeps its own service path), which is how tests
point the real client at a local server. Requests go through :meth:`GoogleServices.execute`,
which retries rate limits and server errors with exponential back-off and turns Google's
error bodies into :class:`GoogleApiError` with a kind the tools can act on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from co_core import CoError
from co_google.auth import LOGIN_HINT, Found, require_credentials

# name -> (discovery name, version, service path under the root URL, API host to enable)
APIS = {
    "drive": ("drive", "v3", "drive/v3/", "drive.googleapis.com"),
    "gmail": ("gmail", "v1", "", "gmail.googleapis.com"),
    "calendar": ("calendar", "v3", "calendar/v3/", "calendar-json.googleapis.com"),
}
LABELS = {"drive": "Drive", "gmail": "Gmail", "calendar": "Calendar"}
RETRY_STATUSES = {429, 500, 502, 503, 504}
RATE_REASONS = {"rateLimitExceeded", "userRateLimitExceeded"}


class GoogleApiError(CoError):
    """A Google call failed. ``kind``: auth, not_enabled, scope, not_found, rate, bad_request, other."""

    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


def _error_parts(exc: Any) -> tuple[int, str, set[str]]:
    """Status, Google's message and reasons (``errors[].reason`` and ErrorInfo reasons)."""
    status = int(getattr(exc.resp, "status", 0) or 0)
    try:
        body = json.loads(exc.content.decode("utf-8", "replace"))["error"]
    except (ValueError, KeyError, TypeError, AttributeError):
        return status, str(getattr(exc, "reason", "") or exc), set()
    if not isinstance(body, dict):
        return status, str(body), set()
    reasons = {str(e.get("reason")) for e in body.get("errors", []) if isinstance(e, dict)}
    reasons |= {str(d.get("reason")) for d in body.get("details", []) if isinstance(d, dict)}
    return status, str(body.get("message", "")), reasons - {"None"}


def classify(exc: Any, api: str) -> GoogleApiError:
    """Turn an HttpError into something a user or model can act on (seed 001's table)."""
    status, message, reasons = _error_parts(exc)
    label, host = LABELS[api], APIS[api][3]
    if reasons & {"accessNotConfigured", "SERVICE_DISABLED"}:
        return GoogleApiError(
            "not_enabled",
            f"The {label} API is not enabled for this Google Cloud project. "
            f"Ask the user to run: gcloud services enable {host}",
            status,
        )
    if status == 401:
        return GoogleApiError(
            "auth", f"Google credentials are missing or expired: {LOGIN_HINT}", status
        )
    if status == 403 and reasons & {"insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"}:
        return GoogleApiError(
            "scope", f"The Google login lacks the {label} scope: {LOGIN_HINT} again", status
        )
    if status in RETRY_STATUSES or reasons & RATE_REASONS:
        return GoogleApiError(
            "rate", f"{label} is busy or rate-limited ({status}): {message}", status
        )
    if status == 404:
        return GoogleApiError("not_found", f"{label}: not found ({message})", status)
    if status == 400:
        return GoogleApiError("bad_request", f"{label} rejected the request: {message}", status)
    return GoogleApiError("other", f"{label} error {status}: {message}", status)


@dataclass
class GoogleServices:
    """One per Co run; tools reach it with ``ctx.deps.resource("google")``."""

    settings: Any
    sleep: Callable[[float], None] = time.sleep
    _found: Found | None = None
    _clients: dict[str, Any] = field(default_factory=dict)
    # search_drive page tokens: (query, page) -> token for that page.
    page_tokens: dict[tuple[str, int], str] = field(default_factory=dict)

    @property
    def section(self) -> Any:
        return self.settings.section("google")

    @property
    def found(self) -> Found:
        if self._found is None:
            self._found = require_credentials(self.settings)
        return self._found

    def client(self, api: str) -> Any:
        """The discovery client for ``drive``, ``gmail`` or ``calendar``."""
        if api not in self._clients:
            from googleapiclient.discovery import build

            name, version, service_path, _host = APIS[api]
            options = None
            if self.section.api_endpoint:
                options = {
                    "api_endpoint": self.section.api_endpoint.rstrip("/") + "/" + service_path
                }
            self._clients[api] = build(
                name,
                version,
                credentials=self.found.credentials,
                client_options=options,
                static_discovery=True,
                cache_discovery=False,
            )
        return self._clients[api]

    def execute(self, request: Any, api: str) -> Any:
        """Run one request: back off on 429/5xx, map Google's errors to GoogleApiError."""
        import httplib2
        from google.auth.exceptions import GoogleAuthError, TransportError
        from googleapiclient.errors import HttpError

        attempts = self.section.retries + 1
        delay = self.section.retry_delay
        for attempt in range(attempts):
            try:
                return request.execute()
            except HttpError as exc:
                problem = classify(exc, api)
                # A 5xx on a POST may have been applied: retrying could make a second draft.
                unsafe = (problem.status or 0) >= 500 and getattr(request, "method", "GET") != "GET"
                if problem.kind != "rate" or unsafe or attempt == attempts - 1:
                    raise problem from exc
            except (OSError, httplib2.HttpLib2Error, TransportError) as exc:
                raise GoogleApiError("other", f"cannot reach Google {LABELS[api]}: {exc}") from exc
            except GoogleAuthError as exc:  # refresh failed: revoked or expired token
                raise GoogleApiError(
                    "auth", f"Google credentials are missing or expired: {LOGIN_HINT}"
                ) from exc
            self.sleep(delay * (2**attempt))
        raise AssertionError("unreachable")

    def close(self) -> None:
        for client in self._clients.values():
            try:
                client.close()
            except Exception:
                pass
        self._clients.clear()


def make_services(settings: Any) -> GoogleServices:
    """The ``register_deps`` factory: nothing is built or imported until a tool asks."""
    return GoogleServices(settings)
