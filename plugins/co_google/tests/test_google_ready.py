"""Google's tools are offered only once the user is signed in (``plugin_ready``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import co_google.plugin
from fake_google import FakeGoogle
from pydantic_ai.messages import ModelResponse, TextPart

from co_core.testing import run_turn, status_rows, use_plugin


def offered(app: Any) -> tuple[list[str], str]:
    seen: dict[str, Any] = {}

    def script(messages: list[Any], info: Any) -> ModelResponse:
        seen["tools"] = sorted(t.name for t in info.function_tools)
        seen["instructions"] = messages[-1].instructions or ""
        return ModelResponse(parts=[TextPart("ok")])

    run_turn(app, "check my email", script)
    return seen["tools"], seen["instructions"]


def test_not_signed_in_no_google_tool_is_offered_and_the_prompt_says_how(co_dirs: Path) -> None:
    with use_plugin(co_google.plugin, name="google") as app:
        tools, instructions = offered(app)
        row = status_rows(app)["google tools"]
    assert not {"list_emails", "search_drive", "list_calendar_events"} & set(tools)
    assert "run `co google login`" in instructions
    assert row.state == "off" and "co google login" in row.detail


def test_signed_in_every_google_tool_is_offered(
    co_dirs: Path, token: Path, fake: FakeGoogle
) -> None:
    with use_plugin(co_google.plugin, name="google", settings={"tool_budget": 10_000}) as app:
        tools, instructions = offered(app)
        row = status_rows(app)["google tools"]
    assert {"list_emails", "search_drive", "list_calendar_events", "draft_email"} <= set(tools)
    assert "co google login" not in instructions
    assert (row.state, row.detail) == ("ok", "offered (12 tools)")


def test_application_default_credentials_count_as_signed_in(
    co_dirs: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    adc = tmp_path / "adc.json"
    adc.write_text('{"type": "authorized_user"}', encoding="utf-8")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    with use_plugin(co_google.plugin, name="google") as app:
        assert status_rows(app)["google tools"].state == "ok"
    with use_plugin(
        co_google.plugin, name="google", settings={"google": {"use_adc": False}}
    ) as app:
        assert status_rows(app)["google tools"].state == "off"
