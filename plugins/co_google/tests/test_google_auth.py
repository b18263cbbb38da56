"""Login, logout, credential fallback, refresh and the status check, against the local fake."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from co_google.auth import SCOPES, find_credentials, login
from co_google.status import check_google
from co_google.tools.drive import search_drive
from fake_google import not_enabled, write_token
from pydantic_ai import ModelRetry

CO = str(Path(sys.executable).with_name("co"))


def client_secrets(tmp_path: Path, fake) -> Path:
    path = tmp_path / "client.json"
    path.write_text(
        json.dumps(
            {
                "installed": {
                    "client_id": "cid.apps.googleusercontent.com",
                    "client_secret": "csecret",
                    "auth_uri": f"{fake.url}/auth",
                    "token_uri": f"{fake.url}/token",
                    "redirect_uris": ["http://localhost"],
                }
            }
        )
    )
    return path


def settings_for(co_dirs, fake, **google):
    from co_core.testing import make_app

    values = {"api_endpoint": fake.url, "token_uri": f"{fake.url}/token", "use_adc": False}
    values.update(google)
    return make_app({"google": values}).settings


def co(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CO, *args], input=stdin, capture_output=True, text=True, timeout=60, env=os.environ
    )


def test_console_login_saves_a_private_token_that_then_works(co_dirs, fake, tmp_path, monkeypatch):
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")  # the fake token endpoint is http
    settings = settings_for(co_dirs, fake, credentials_path=str(client_secrets(tmp_path, fake)))
    said: list[str] = []

    def paste(prompt: str) -> str:
        url = next(line for line in said if line.startswith(fake.url + "/auth"))
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        assert set(query["scope"][0].split()) == set(SCOPES)
        assert query["access_type"] == ["offline"] and query["code_challenge_method"] == ["S256"]
        return f"http://localhost:1/?state={query['state'][0]}&code=good-code&scope=x"

    path, missing = login(settings, console=True, ask=paste, say=said.append)
    assert missing == []

    assert path == co_dirs / "google-token.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    saved = json.loads(path.read_text())
    assert saved["refresh_token"] == "login-refresh" and saved["token"] == "login-token"
    (exchange,) = fake.code_exchanges
    assert exchange["code"] == "good-code" and exchange["code_verifier"]
    assert exchange["redirect_uri"] == "http://localhost:1/"
    result = check_google(settings)
    assert result.state == "ok" and "me@example.com" in result.detail and str(path) in result.detail


def test_pasted_address_from_another_attempt_is_refused(co_dirs, fake, tmp_path, monkeypatch):
    from co_core import CoError

    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")
    settings = settings_for(co_dirs, fake, credentials_path=str(client_secrets(tmp_path, fake)))
    with pytest.raises(CoError, match="state mismatch"):
        login(
            settings,
            console=True,
            ask=lambda _: "http://localhost:1/?state=forged&code=good-code",
            say=lambda _: None,
        )
    assert fake.code_exchanges == []
    assert not (co_dirs / "google-token.json").exists()


def test_login_without_client_file_is_one_clear_line(co_dirs):
    done = co("google", "login", "--console")
    assert done.returncode == 2
    assert "google.credentials_path" in done.stderr and "Traceback" not in done.stderr


def test_logout_removes_the_token(co_dirs, fake):
    write_token(co_dirs / "google-token.json", fake)
    done = co("google", "logout")
    assert done.returncode == 0 and "Removed" in done.stdout
    assert not (co_dirs / "google-token.json").exists()
    again = co("google", "logout")
    assert "nothing to do" in again.stdout


def test_status_when_nothing_is_set_up(co_dirs, fake):
    settings = settings_for(co_dirs, fake)
    result = check_google(settings)
    assert result.state == "off" and "co google login" in result.detail


def test_status_in_co_status_names_the_token(co_dirs, fake):
    write_token(co_dirs / "google-token.json", fake)
    settings_for(co_dirs, fake)  # writes settings.json for the subprocess
    done = co("status", "--json")
    (row,) = [r for r in json.loads(done.stdout) if r["name"] == "google"]
    assert row["state"] == "ok" and "google-token.json" in row["detail"]
    assert "me@example.com" in row["detail"]


def test_status_with_revoked_login_says_log_in_again(co_dirs, fake):
    write_token(
        co_dirs / "google-token.json",
        fake,
        token="old",
        refresh_token="revoked",
        expiry="2020-01-01T00:00:00Z",
    )
    result = check_google(settings_for(co_dirs, fake))
    assert result.state == "fail" and "co google login" in result.detail


def test_status_warns_when_the_api_is_not_enabled(co_dirs, fake):
    write_token(co_dirs / "google-token.json", fake)
    fake.fail("/drive/", (403, not_enabled("drive.googleapis.com")))
    result = check_google(settings_for(co_dirs, fake))
    assert result.state == "warn" and "gcloud services enable drive.googleapis.com" in result.detail


S = "https://www.googleapis.com/auth/"
FULL_GRANT_WITHOUT_DRIVE = {
    S + "gmail.readonly",
    S + "gmail.compose",
    S + "gmail.modify",
    S + "calendar.readonly",
}


@pytest.mark.parametrize(
    ("unticked", "asked", "says"),
    [
        ({S + "drive.readonly"}, "/gmail/v1/users/me/profile", "Drive tools"),
        (
            {S + "drive.readonly", S + "gmail.readonly", S + "gmail.modify"},
            "/calendar/v3/users/me/calendarList/primary",
            "Drive tools, reading mail, label_email",
        ),
        ({S + "calendar.readonly"}, "/drive/v3/about", "calendar tools"),
    ],
)
def test_status_with_an_api_unticked_at_sign_in_is_signed_in_not_failed(
    co_dirs, fake, unticked, asked, says
):
    from fake_google import FULL_GRANT

    granted = FULL_GRANT - unticked
    fake.tokens["good-token"] = set(granted)
    write_token(co_dirs / "google-token.json", fake, scopes=sorted(granted))
    result = check_google(settings_for(co_dirs, fake))
    assert result.state == "warn", result.detail
    assert "signed in as me@example.com" in result.detail
    assert f"not allowed at sign-in: {says} (run `co google login` again" in result.detail
    assert [r["path"] for r in fake.requests] == [asked]


def test_status_with_nothing_usable_granted_says_how_to_allow_it(co_dirs, fake):
    write_token(co_dirs / "google-token.json", fake, scopes=[S + "gmail.compose"])
    result = check_google(settings_for(co_dirs, fake))
    assert result.state == "fail" and "co google login" in result.detail
    assert "allows none of" in result.detail and fake.requests == []


def test_status_with_unknown_scopes_tries_the_next_api(co_dirs, fake):
    # ADC without a scope list: Drive refuses for scopes, Gmail answers.
    fake.tokens["good-token"] = set(FULL_GRANT_WITHOUT_DRIVE)
    write_token(co_dirs / "google-token.json", fake, scopes=None)
    result = check_google(settings_for(co_dirs, fake))
    assert result.state == "ok" and "signed in as me@example.com" in result.detail


def test_application_default_credentials_are_the_fallback(co_dirs, fake, tmp_path, monkeypatch):
    adc = tmp_path / "adc.json"
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "cid",
                "client_secret": "cs",
                "refresh_token": "good-refresh",
            }
        )
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    settings = settings_for(co_dirs, fake, use_adc=True)
    found = find_credentials(settings)
    assert found is not None and "application-default" in found.source
    result = check_google(settings)
    assert result.state == "ok" and str(adc) in result.detail
    assert fake.reached("/token")  # the ADC refresh token was exchanged for an access token


def test_token_file_wins_over_adc_and_broken_adc_is_reported(co_dirs, fake, monkeypatch):
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/adc.json")
    settings = settings_for(co_dirs, fake, use_adc=True)
    with pytest.raises(Exception, match="application-default credentials .* are unusable"):
        find_credentials(settings)
    odd = co_dirs / "adc.json"
    odd.write_text(json.dumps({"type": "external_account", "credential_source": {"file": "/x"}}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(odd))
    with pytest.raises(Exception, match="'external_account' is not supported"):
        find_credentials(settings)
    write_token(co_dirs / "google-token.json", fake)
    assert "token" in find_credentials(settings).source


def test_expired_access_token_is_refreshed_transparently(co_dirs, fake, tmp_path, run_tool):
    write_token(co_dirs / "google-token.json", fake, token="stale", expiry="2020-01-01T00:00:00Z")
    fake.drive_files["a"] = {"id": "a", "name": "Plan", "mimeType": "text/plain", "text": "x"}
    assert run_tool(search_drive, query="plan").count == 1
    assert fake.reached("/token")
    assert fake.reached("/drive/")[-1]["auth"].startswith("Bearer fresh-token")


def test_rejected_token_and_revoked_refresh_hint_at_login(co_dirs, fake, run_tool):
    write_token(co_dirs / "google-token.json", fake, token="rejected", refresh_token="revoked")
    with pytest.raises(ModelRetry, match="co google login"):
        run_tool(search_drive, query="plan")
    assert fake.reached("/drive/")[0]["auth"] == "Bearer rejected"  # got a 401 first


def test_tools_without_any_credentials_hint_at_login(co_dirs, fake, run_tool):
    (co_dirs / "google-token.json").unlink()
    with pytest.raises(ModelRetry, match="Google is not set up: run `co google login`"):
        run_tool(search_drive, query="plan")
    assert fake.requests == []


def test_google_sdks_are_not_imported_at_start_up(co_dirs):
    code = (
        "import sys; from co_core.cli.main import build; "
        "from co_core.kernel.app import load_app; app = load_app(); build(app); app.host.tools(); "
        "from co_core.kernel.status import collect_status; "
        "heavy = [m for m in sys.modules if m.startswith(('googleapiclient', 'pydantic_ai'))]; "
        "print(heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def test_loose_token_permissions_are_tightened(co_dirs, fake):
    path = write_token(co_dirs / "google-token.json", fake)
    path.chmod(0o644)
    find_credentials(settings_for(co_dirs, fake))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_corrupt_token_is_one_clear_line(co_dirs, fake):
    (co_dirs / "google-token.json").write_text("{not json")
    settings_for(co_dirs, fake)
    done = co("google", "status")
    assert done.returncode == 1 and "unreadable" in done.stdout and "co google login" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_bad_time_zone_setting_is_reported_by_name(co_dirs, fake):
    settings_for(co_dirs, fake)
    import json as _json

    path = co_dirs / "settings.json"
    values = _json.loads(path.read_text())
    values["google"]["time_zone"] = "Mars/Olympus"
    path.write_text(_json.dumps(values))
    done = co("google", "status")
    assert done.returncode == 2 and "time_zone" in done.stderr and "Mars/Olympus" in done.stderr
    assert "Traceback" not in done.stderr


def test_browser_login_completes_through_the_local_redirect(co_dirs, fake, tmp_path, monkeypatch):
    import threading
    import urllib.request
    import webbrowser

    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")
    opened: list[str] = []

    class ConsentingBrowser(webbrowser.BaseBrowser):
        """Stands in for the user's browser: follows Google's redirect back to Co."""

        def open(self, url, new=0, autoraise=True):
            opened.append(url)
            threading.Thread(target=lambda: urllib.request.urlopen(url, timeout=30).read()).start()
            return True

    webbrowser.register("co-test-browser", None, ConsentingBrowser("co-test-browser"))
    settings = settings_for(co_dirs, fake, credentials_path=str(client_secrets(tmp_path, fake)))
    path, _missing = login(settings, browser="co-test-browser")
    assert opened and opened[0].startswith(f"{fake.url}/auth?")
    assert json.loads(path.read_text())["refresh_token"] == "login-refresh"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    (exchange,) = fake.code_exchanges
    assert exchange["redirect_uri"].startswith("http://localhost:")


def test_partial_consent_is_saved_and_reported(co_dirs, fake, tmp_path, monkeypatch):
    monkeypatch.delenv("OAUTHLIB_RELAX_TOKEN_SCOPE", raising=False)
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")
    settings = settings_for(co_dirs, fake, credentials_path=str(client_secrets(tmp_path, fake)))
    said: list[str] = []

    def paste(prompt: str) -> str:
        url = next(line for line in said if line.startswith(fake.url + "/auth"))
        state = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["state"][0]
        return f"http://localhost:1/?state={state}&code=partial-code"

    path, missing = login(settings, console=True, ask=paste, say=said.append)
    assert missing == [
        "https://www.googleapis.com/auth/gmail.compose",
        "https://www.googleapis.com/auth/gmail.modify",
    ]
    assert path.exists()
    assert "OAUTHLIB_RELAX_TOKEN_SCOPE" not in os.environ  # restored after login


def test_co_google_login_console_end_to_end(co_dirs, fake, tmp_path, monkeypatch):
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")
    monkeypatch.setenv("PYTHONUNBUFFERED", "1")
    monkeypatch.setenv("GOOGLE_CREDENTIALS_PATH", str(client_secrets(tmp_path, fake)))
    settings_for(co_dirs, fake)
    proc = subprocess.Popen(
        [CO, "google", "login", "--console"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(fake.url + "/auth"):
            break
    state = urllib.parse.parse_qs(urllib.parse.urlsplit(line.strip()).query)["state"][0]
    out, err = proc.communicate(
        f"http://localhost:1/?state={state}&code=partial-code\n", timeout=60
    )
    assert proc.returncode == 0, err
    assert "Signed in. Token saved to" in out
    assert "Not granted: draft_email, label_email will not work" in out
    assert stat.S_IMODE((co_dirs / "google-token.json").stat().st_mode) == 0o600


def _partial_login(co_dirs, fake, tmp_path, monkeypatch):
    """`co google login` where the user allowed reading Gmail but not writing to it."""
    monkeypatch.setenv("OAUTHLIB_INSECURE_TRANSPORT", "1")
    settings = settings_for(co_dirs, fake, credentials_path=str(client_secrets(tmp_path, fake)))
    said: list[str] = []

    def paste(prompt: str) -> str:
        url = next(line for line in said if line.startswith(fake.url + "/auth"))
        state = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["state"][0]
        return f"http://localhost:1/?state={state}&code=partial-code"

    path, _missing = login(settings, console=True, ask=paste, say=said.append)
    return path


COMPOSE = "https://www.googleapis.com/auth/gmail.compose"


def test_the_saved_token_lists_the_scopes_granted_not_those_asked(
    co_dirs, fake, tmp_path, monkeypatch
):
    path = _partial_login(co_dirs, fake, tmp_path, monkeypatch)
    saved = set(json.loads(path.read_text())["scopes"])
    assert COMPOSE not in saved
    assert saved == fake.refresh_tokens["login-refresh"]


def test_after_partial_consent_tools_still_work_once_the_access_token_expires(
    co_dirs, fake, tmp_path, monkeypatch, run_tool
):
    path = _partial_login(co_dirs, fake, tmp_path, monkeypatch)
    info = json.loads(path.read_text())
    info["expiry"] = "2020-01-01T00:00:00Z"  # an hour later: the access token has expired
    path.write_text(json.dumps(info))
    fake.drive_files["a"] = {"id": "a", "name": "Plan", "mimeType": "text/plain", "text": "x"}
    fake.requests.clear()

    assert run_tool(search_drive, query="plan").count == 1
    (refresh,) = fake.reached("/token")
    asked = set(urllib.parse.parse_qs(refresh["body"].decode()).get("scope", [""])[0].split())
    assert COMPOSE not in asked  # only what the user granted
    (listed,) = fake.reached("/drive/")
    assert listed["auth"].startswith("Bearer fresh-token")  # refreshed before the call

    from co_google.tools.gmail import draft_email

    with pytest.raises(ModelRetry, match="gmail.compose.*co google login"):
        run_tool(draft_email, to="carol@example.com", subject="x", body="y")
    assert fake.drafts == []


def test_after_partial_consent_an_access_token_google_refuses_is_renewed(
    co_dirs, fake, tmp_path, monkeypatch, run_tool
):
    path = _partial_login(co_dirs, fake, tmp_path, monkeypatch)
    del fake.tokens["login-token"]  # Google no longer accepts it (401), the login stands
    fake.drive_files["a"] = {"id": "a", "name": "Plan", "mimeType": "text/plain", "text": "x"}
    assert run_tool(search_drive, query="plan").count == 1
    assert fake.reached("/drive/")[-1]["auth"].startswith("Bearer fresh-token")
    assert path.exists()


def test_an_expired_token_is_refreshed_before_the_call_not_after_a_401(co_dirs, fake, run_tool):
    write_token(co_dirs / "google-token.json", fake, token="stale", expiry="2020-01-01T00:00:00Z")
    fake.drive_files["a"] = {"id": "a", "name": "Plan", "mimeType": "text/plain", "text": "x"}
    assert run_tool(search_drive, query="plan").count == 1
    assert [r["path"] for r in fake.requests] == ["/token", "/drive/v3/files"]
    assert all(r["auth"] != "Bearer stale" for r in fake.requests)
