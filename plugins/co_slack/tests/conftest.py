"""Fixtures: a local Slack Web API and Co deps pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from slack_fake import TOKEN, FakeSlack, SlackServer


@pytest.fixture
def slack_server() -> Iterator[SlackServer]:
    with SlackServer(FakeSlack()) as server:
        yield server


@pytest.fixture
def fake(slack_server: SlackServer) -> FakeSlack:
    return slack_server.fake


@pytest.fixture
def slack_env(
    co_dirs: Path, slack_server: SlackServer, monkeypatch: pytest.MonkeyPatch
) -> SlackServer:
    """Co configured the way a user would: token and base URL in the environment."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("CO_SLACK_BASE_URL", slack_server.base_url)
    monkeypatch.setenv("CO_LOAD_PLUGINS", "slack")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # a proxy in CI must not intercept
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    return slack_server


def slack_deps(settings: dict[str, Any] | None = None, workspace: Path | None = None) -> Any:
    from co_core.testing import make_deps

    return make_deps(settings, workspace=workspace)


@pytest.fixture
def make_ctx(slack_env: SlackServer):
    """``make_ctx(settings)`` -> a real pydantic-ai RunContext whose deps reach the server."""
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    def make(settings: dict[str, Any] | None = None) -> RunContext:
        return RunContext(deps=slack_deps(settings), model=TestModel(), usage=RunUsage())

    return make
