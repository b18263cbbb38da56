"""Read-only checks against the real Google APIs; skipped unless real credentials exist.

Credentials are looked for before the test fixtures hide them: ``CO_GOOGLE_LIVE_TOKEN``
(a token saved by ``co google login``), Co's real token file, or application-default
credentials. Nothing is written to the account (no drafts are created).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from co_google.auth import TOKEN_FILE, adc_path


def _real_credentials() -> tuple[str, Path] | None:
    named = os.environ.get("CO_GOOGLE_LIVE_TOKEN")
    if named and Path(named).is_file():
        return "token", Path(named)
    import platformdirs

    config = os.environ.get("CO_CONFIG_DIR") or platformdirs.user_config_dir("co", appauthor=False)
    token = Path(config).expanduser() / TOKEN_FILE
    if token.is_file():
        return "token", token
    adc = adc_path()
    if adc is not None:
        return "adc", adc
    return None


REAL = _real_credentials()  # evaluated at collection, before fixtures change the environment
pytestmark = pytest.mark.skipif(
    REAL is None,
    reason="no real Google credentials (run `co google login`, set CO_GOOGLE_LIVE_TOKEN, "
    "or `gcloud auth application-default login`)",
)


@pytest.fixture
def live_tool(co_dirs, monkeypatch, tmp_path):
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from co_core.testing import make_deps

    assert REAL is not None
    kind, path = REAL
    google = {"use_adc": kind == "adc"}
    if kind == "token":
        google["token_path"] = str(path)
    else:
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    deps = make_deps({"google": google}, workspace=tmp_path)

    def run(tool, **args):
        return tool(RunContext(deps=deps, model=TestModel(), usage=RunUsage()), **args)

    yield run
    deps.close()


def test_live_status_says_the_credentials_work(co_dirs, monkeypatch):
    from co_google.status import check_google

    from co_core.testing import make_app

    kind, path = REAL
    google = {"token_path": str(path)} if kind == "token" else {"use_adc": True}
    if kind == "adc":
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    result = check_google(make_app({"google": google}).settings)
    assert result.state in ("ok", "warn"), result.detail


def test_live_drive_search(live_tool):
    from co_google.tools.drive import search_drive

    result = live_tool(search_drive, query="the")
    assert result.count is not None and result.count >= 0


def test_live_gmail_list(live_tool):
    from co_google.tools.gmail import list_emails

    result = live_tool(list_emails, limit=3)
    assert result.count is not None and result.count <= 3


def test_live_calendar_week(live_tool):
    from co_google.tools.calendar import list_calendar_events

    result = live_tool(list_calendar_events)
    assert result.count is not None and result.count >= 0


def test_live_gmail_thread_of_the_newest_email(live_tool):
    from co_google.tools.gmail import list_emails, read_email

    listed = live_tool(list_emails, limit=1)
    if not listed.count:
        pytest.skip("the inbox is empty")
    text = live_tool(read_email, email_id=listed.data["ids"][0], thread=True)
    assert text.startswith("Conversation of ")


def test_live_free_busy_today(live_tool):
    from co_google.tools.calendar import free_busy

    result = live_tool(free_busy, start="today")
    assert "- you: " in result.display and "Free for everyone" in result.display
