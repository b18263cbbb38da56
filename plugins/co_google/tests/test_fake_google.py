"""The fake refuses what Google refuses, so Co's tests cannot pass on calls Google rejects."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

import pytest
from fake_google import FULL_GRANT, parse_fields


def client(fake, api: str, version: str, path: str, token: str = "good-token"):
    import google.oauth2.credentials
    from googleapiclient.discovery import build

    creds = google.oauth2.credentials.Credentials(token)
    return build(
        api,
        version,
        credentials=creds,
        client_options={"api_endpoint": f"{fake.url}/{path}"},
        static_discovery=True,
        cache_discovery=False,
    )


def status_of(request) -> tuple[int, str]:
    from googleapiclient.errors import HttpError

    with pytest.raises(HttpError) as caught:
        request.execute()
    return caught.value.resp.status, caught.value.content.decode()


def test_ordering_by_start_time_needs_single_events(fake):
    events = client(fake, "calendar", "v3", "calendar/v3/").events()
    status, body = status_of(events.list(calendarId="primary", orderBy="startTime"))
    assert status == 400 and "ordering is not available" in body
    assert events.list(calendarId="primary", orderBy="startTime", singleEvents=True).execute()


def test_unknown_fields_are_refused_and_known_ones_applied(fake):
    fake.drive_files["a"] = {"id": "a", "name": "Plan", "mimeType": "text/plain"}
    files = client(fake, "drive", "v3", "drive/v3/").files()
    status, body = status_of(files.list(fields="files(id, colour)"))
    assert status == 400 and "Invalid field selection colour" in body
    assert files.list(fields="files(id)").execute() == {"files": [{"id": "a"}]}
    assert parse_fields("user/emailAddress,files(id,owners(me))") == {
        "user": {"emailAddress": {}},
        "files": {"id": {}, "owners": {"me": {}}},
    }


def test_a_draft_raw_that_is_not_base64url_is_refused(fake):
    drafts = client(fake, "gmail", "v1", "").users().drafts()
    status, body = status_of(drafts.create(userId="me", body={"message": {"raw": "not base64!"}}))
    assert status == 400 and "Base64 decoding failed" in body


def test_each_api_needs_one_of_its_documented_scopes(fake):
    fake.tokens["drive-only"] = {"https://www.googleapis.com/auth/drive.readonly"}
    gmail = client(fake, "gmail", "v1", "", token="drive-only").users()
    status, body = status_of(gmail.labels().list(userId="me"))
    assert status == 403 and "insufficientPermissions" in body
    # compose lets Co create drafts but not read mail
    fake.tokens["compose"] = {"https://www.googleapis.com/auth/gmail.compose"}
    gmail = client(fake, "gmail", "v1", "", token="compose").users()
    assert status_of(gmail.messages().list(userId="me"))[0] == 403


def test_a_refresh_may_not_ask_for_more_than_was_granted(fake):
    fake.refresh_tokens["partial"] = set(FULL_GRANT) - {
        "https://www.googleapis.com/auth/gmail.compose"
    }
    form = {
        "grant_type": "refresh_token",
        "refresh_token": "partial",
        "scope": " ".join(sorted(FULL_GRANT)),
    }
    request = urllib.request.Request(
        f"{fake.url}/token", data=urllib.parse.urlencode(form).encode(), method="POST"
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request)
    assert json.loads(caught.value.read())["error"] == "invalid_scope"
