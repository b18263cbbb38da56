"""The ``google`` resource: Drive, Gmail and Calendar clients built on first use.

Clients come from the discovery documents shipped inside google-api-python-client
(``static_discovery=True``), so building one needs no network. ``api_endpoint`` replaces
Google's root URL for every API (each keeps its own service path), which is how tests
point the real client at a local server. Requests go through :meth:`GoogleServices.execute`
(or :meth:`GoogleServices.execute_many`, one batch HTTP call), which retries rate limits and
server errors with exponential back-off and turns Google's error bodies into
:class:`GoogleApiError` with a kind the tools can act on.

httplib2 is not thread-safe and pydantic-ai runs a turn's read tools in parallel threads,
so, as google-api-python-client's thread-safety guide says, every thread gets its own
authorized connection: the clients are shared, each request is built on the calling
thread's connection.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
# name -> (root URL, batch path) as the discovery documents give them
BATCH = {
    "drive": ("https://www.googleapis.com/", "batch/drive/v3"),
    "gmail": ("https://gmail.googleapis.com/", "batch"),
    "calendar": ("https://www.googleapis.com/", "batch/calendar/v3"),
}
S = "https://www.googleapis.com/auth/"
FULL_GMAIL = "https://mail.google.com/"
# The scope a request needs, by the first matching discovery method id prefix, and the
# granted scopes that also cover it.
NEEDS = [
    ("gmail.users.drafts.", S + "gmail.compose"),
    ("gmail.users.messages.modify", S + "gmail.modify"),
    ("gmail.users.threads.modify", S + "gmail.modify"),
    ("gmail.", S + "gmail.readonly"),
    ("drive.", S + "drive.readonly"),
    ("calendar.", S + "calendar.readonly"),
]
COVERED_BY = {
    S + "gmail.readonly": {S + "gmail.modify", FULL_GMAIL},
    S + "gmail.compose": {S + "gmail.modify", FULL_GMAIL},
    S + "gmail.modify": {FULL_GMAIL},
    S + "drive.readonly": {S + "drive"},
    S + "calendar.readonly": {S + "calendar"},
}


def needed_scope(method_id: str) -> str | None:
    """The scope Co asks for that lets a discovery method (``gmail.users.drafts.create``) run."""
    for prefix, scope in NEEDS:
        if method_id.startswith(prefix):
            return scope
    return None


LABELS = {"drive": "Drive", "gmail": "Gmail", "calendar": "Calendar"}
RETRY_STATUSES = {429, 500, 502, 503, 504}
RATE_REASONS = {"rateLimitExceeded", "userRateLimitExceeded"}


class GoogleApiError(CoError):
    """A Google call failed. ``kind``: auth, not_enabled, scope, not_found, rate, bad_request,
    too_large (an export over Drive's 10 MB), other."""

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


def missing_scope(label: str, scope: str | None, status: int | None = None) -> GoogleApiError:
    what = f"the {scope.removeprefix(S)} permission" if scope else f"the {label} scope"
    return GoogleApiError(
        "scope",
        f"The Google login lacks {what}: ask the user to {LOGIN_HINT} again and allow it.",
        status,
    )


def classify(exc: Any, api: str, scope: str | None = None) -> GoogleApiError:
    """Turn an HttpError into something a user or model can act on."""
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
        return missing_scope(label, scope, status)
    if status == 403 and "exportSizeLimitExceeded" in reasons:
        # files.export: "the exported content is limited to 10 MB" (Drive API reference)
        return GoogleApiError(
            "too_large", f"{label}: the file is too large to export (Google's limit: 10 MB)", status
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
    """One per Co run; tools reach it with ``ctx.deps.resource(GOOGLE)``."""

    settings: Any
    sleep: Callable[[float], None] = time.sleep
    _found: Found | None = None
    _clients: dict[str, Any] = field(default_factory=dict)
    _local: threading.local = field(default_factory=threading.local)
    _https: list[Any] = field(default_factory=list)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    # search_drive page tokens: (query, page) -> token for that page.
    page_tokens: dict[tuple[str, int], str] = field(default_factory=dict)
    # Session caches: Gmail labels, the account's address, the calendar list, which
    # calendar an event id was listed from, headers of emails replied to.
    labels: list[dict[str, Any]] | None = None
    me: str | None = None
    calendars: list[dict[str, Any]] | None = None
    event_calendars: dict[str, str] = field(default_factory=dict)
    reply_heads: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)

    @property
    def section(self) -> Any:
        return self.settings.section("google")

    @property
    def found(self) -> Found:
        with self._lock:
            if self._found is None:
                self._found = require_credentials(self.settings)
            return self._found

    def granted(self) -> set[str] | None:
        """The scopes the login holds, when known (a saved login lists them)."""
        scopes = getattr(self.found.credentials, "scopes", None)
        return set(scopes) if scopes else None

    def lacks(self, scope: str | None) -> bool:
        granted = self.granted()
        if not scope or granted is None:
            return False
        return not ({scope} | COVERED_BY.get(scope, set())) & granted

    def http(self) -> Any:
        """This thread's authorized connection (httplib2 must not be shared by threads)."""
        http = getattr(self._local, "http", None)
        if http is None:
            import google_auth_httplib2
            from googleapiclient.http import build_http

            http = google_auth_httplib2.AuthorizedHttp(self.found.credentials, http=build_http())
            self._local.http = http
            with self._lock:
                self._https.append(http)
        return http

    def _request(self, _http: Any, *args: Any, **kwargs: Any) -> Any:
        """The clients' request builder: every request rides on its thread's connection."""
        from googleapiclient.http import HttpRequest

        return HttpRequest(self.http(), *args, **kwargs)

    def client(self, api: str) -> Any:
        """The discovery client for ``drive``, ``gmail`` or ``calendar`` (shared by threads)."""
        with self._lock:
            if api not in self._clients:
                from googleapiclient.discovery import build

                name, version, service_path, _host = APIS[api]
                options = None
                if self.section.api_endpoint:
                    options = {
                        "api_endpoint": self.section.api_endpoint.rstrip("/") + "/" + service_path
                    }
                self._clients[api] = Kept(
                    build(
                        name,
                        version,
                        http=self.http(),
                        requestBuilder=self._request,
                        client_options=options,
                        static_discovery=True,
                        cache_discovery=False,
                    )
                )
            return self._clients[api]

    def batch_uri(self, api: str) -> str:
        root, path = BATCH[api]
        if self.section.api_endpoint:
            root = self.section.api_endpoint.rstrip("/") + "/"
        return root + path

    def _check_scope(self, request: Any, api: str) -> str | None:
        scope = needed_scope(str(getattr(request, "methodId", "") or ""))
        if self.lacks(scope):
            raise missing_scope(LABELS[api], scope)
        return scope

    def execute(self, request: Any, api: str) -> Any:
        """Run one request: back off on 429/5xx, map Google's errors to GoogleApiError."""
        from googleapiclient.errors import HttpError

        scope = self._check_scope(request, api)
        attempts = self.section.retries + 1
        delay = self.section.retry_delay
        for attempt in range(attempts):
            try:
                with _transport_errors(api):
                    return request.execute(http=self.http())
            except HttpError as exc:
                problem = classify(exc, api, scope)
                # A 5xx on a POST may have been applied: retrying could make a second draft.
                unsafe = (problem.status or 0) >= 500 and getattr(request, "method", "GET") != "GET"
                if problem.kind != "rate" or unsafe or attempt == attempts - 1:
                    raise problem from exc
            self.sleep(delay * (2**attempt))
        raise AssertionError("unreachable")

    def execute_many(self, requests: list[Any], api: str) -> list[Any]:
        """Run read requests as one batch HTTP call, in order; rate-limited ones are retried
        with back-off, one gone meanwhile (404) is None, any other failure is raised."""
        from googleapiclient.errors import HttpError
        from googleapiclient.http import BatchHttpRequest

        if not requests:
            return []
        scope = self._check_scope(requests[0], api)
        results: dict[int, Any] = {}
        pending = list(range(len(requests)))
        attempts = self.section.retries + 1
        delay = self.section.retry_delay
        for attempt in range(attempts):
            failed: dict[int, GoogleApiError] = {}

            def done(request_id: str, response: Any, exception: Any, failed: dict = failed) -> None:
                if exception is None:
                    results[int(request_id)] = response
                elif isinstance(exception, HttpError):
                    failed[int(request_id)] = classify(exception, api, scope)
                else:
                    failed[int(request_id)] = GoogleApiError("other", str(exception))

            batch = BatchHttpRequest(callback=done, batch_uri=self.batch_uri(api))
            for index in pending:
                batch.add(requests[index], request_id=str(index))
            try:
                with _transport_errors(api):
                    batch.execute(http=self.http())
            except HttpError as exc:
                problem = classify(exc, api, scope)
                if problem.kind != "rate" or attempt == attempts - 1:
                    raise problem from exc
                failed = dict.fromkeys(pending, problem)
            for index, problem in list(failed.items()):
                if problem.kind == "not_found":
                    results[index] = None
                    del failed[index]
            hard = [problem for problem in failed.values() if problem.kind != "rate"]
            if hard:
                raise hard[0]
            pending = sorted(failed)
            if not pending:
                return [results[index] for index in range(len(requests))]
            if attempt == attempts - 1:
                raise failed[pending[0]]
            self.sleep(delay * (2**attempt))
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            for http in self._https:
                try:
                    http.close()
                except Exception:
                    pass
            self._https.clear()
            self._clients.clear()
            self._local = threading.local()


class Kept:
    """A discovery resource whose sub-resources (``users()``, ``events()``) are built once.

    google-api-python-client builds a sub-resource anew on every call, 4 to 15 ms each
    (every method of it is generated); tools ask for the same few again and again.
    """

    def __init__(self, resource: Any) -> None:
        self._resource = resource
        self._kept: dict[str, Kept] = {}

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._resource, name)
        if not callable(found) or name.startswith("_"):
            return found

        def method(*args: Any, **kwargs: Any) -> Any:
            if args or kwargs:
                return found(*args, **kwargs)
            kept = self._kept.get(name)
            if kept is None:
                from googleapiclient.discovery import Resource

                made = found()
                if not isinstance(made, Resource):
                    return made
                kept = self._kept[name] = Kept(made)
            return kept

        return method


@contextmanager
def _transport_errors(api: str) -> Iterator[None]:
    """Network and refresh failures as GoogleApiError, one sentence each."""
    import httplib2
    from google.auth.exceptions import GoogleAuthError, TransportError

    try:
        yield
    except (OSError, httplib2.HttpLib2Error, TransportError) as exc:
        raise GoogleApiError("other", f"cannot reach Google {LABELS[api]}: {exc}") from exc
    except GoogleAuthError as exc:  # refresh failed: revoked or expired token
        raise GoogleApiError(
            "auth", f"Google credentials are missing or expired: {LOGIN_HINT}"
        ) from exc


def make_services(settings: Any) -> GoogleServices:
    """The ``register_deps`` factory: nothing is built or imported until a tool asks."""
    return GoogleServices(settings)
