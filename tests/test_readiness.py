"""Tools of a plugin that is not set up are not offered; the user is told how to set it up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from office_plugin import office_and_mail
from pydantic_ai.messages import ModelResponse, TextPart

from co_core.testing import run_turn, status_rows

pytestmark = pytest.mark.usefixtures("co_dirs")


def recording(seen: list[dict[str, Any]], answer: str = "ok") -> Any:
    def script(messages: list[Any], info: Any) -> ModelResponse:
        seen.append(
            {
                "tools": sorted(t.name for t in info.function_tools),
                "instructions": messages[-1].instructions or "",
            }
        )
        return ModelResponse(parts=[TextPart(answer)])

    return script


def test_a_plugin_that_is_not_signed_in_offers_no_tools_and_the_prompt_says_how() -> None:
    seen: list[dict[str, Any]] = []
    with office_and_mail() as app:
        run_turn(app, "check my email", recording(seen))
    assert "list_emails" not in seen[0]["tools"] and "draft_email" not in seen[0]["tools"]
    assert {"read_file", "list_files", "search_notes", "run_command"} <= set(seen[0]["tools"])
    assert "- mail: Mail is not signed in: run `co mail login`" in seen[0]["instructions"]


def test_once_set_up_its_tools_are_offered_and_the_line_is_gone() -> None:
    seen: list[dict[str, Any]] = []
    with office_and_mail({"mail": {"token": "t0k"}}) as app:
        run_turn(app, "check my email", recording(seen))
    assert {"list_emails", "draft_email"} <= set(seen[0]["tools"])
    assert "co mail login" not in seen[0]["instructions"]
    assert "Not set up" not in seen[0]["instructions"]


def test_a_plugin_can_hold_back_only_the_tools_that_need_what_is_missing() -> None:
    seen: list[dict[str, Any]] = []
    with office_and_mail({"office": {"sandbox": False}, "mail": {"token": "t"}}) as app:
        run_turn(app, "run ls", recording(seen))
    assert "run_command" not in seen[0]["tools"]
    assert {"read_file", "list_files", "search_notes"} <= set(seen[0]["tools"])
    assert (
        "- office (run_command): no sandbox: run `co config set office.sandbox true`"
        in seen[0]["instructions"]
    )


def test_co_status_shows_which_plugins_are_offered_and_why_not() -> None:
    with office_and_mail({"office": {"sandbox": False}}) as app:
        rows = status_rows(app)
    assert rows["mail tools"].state == "off"
    assert rows["mail tools"].detail == "not offered: Mail is not signed in: run `co mail login`"
    assert rows["office tools"].state == "warn"
    assert "4 of 5 offered" in rows["office tools"].detail
    assert "run_command: no sandbox" in rows["office tools"].detail
    with office_and_mail({"mail": {"token": "t"}}) as app:
        rows = status_rows(app)
    assert (rows["mail tools"].state, rows["mail tools"].detail) == ("ok", "offered (2 tools)")


def test_slash_tools_marks_the_tools_not_offered_and_says_how_to_set_up(tmp_path: Path) -> None:
    from co_core.ui.repl import Repl

    with office_and_mail() as app:
        repl = Repl(app)
        repl.conversation.prepare()
        try:
            shown = repl._tools("")
        finally:
            repl.conversation.close()
    lines = {line.split()[0]: line for line in shown.splitlines() if line and line[0] != " "}
    assert lines["list_emails"].endswith("(not offered)")
    assert not lines["read_file"].endswith("(not offered)")
    assert "Not offered to the model until set up:" in shown
    assert "- mail: Mail is not signed in: run `co mail login`" in shown


def test_a_plugin_whose_readiness_check_raises_is_named_and_skipped() -> None:
    from co_core import hookimpl

    warnings: list[str] = []

    class Crashing:
        @hookimpl
        def plugin_ready(self, settings: Any) -> str | None:
            raise OSError("disk on fire")

    with office_and_mail() as app:
        app.host._warn = warnings.append
        app.host.register(Crashing(), "crashing")
        seen: list[dict[str, Any]] = []
        run_turn(app, "hi", recording(seen))
    assert any("'crashing' raised in plugin_ready" in w for w in warnings)
    assert "read_file" in seen[0]["tools"]  # the others are unaffected
