"""Fixtures: a local fake Google, a saved login token, and deps wired to both."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_google import FakeGoogle, start, write_token  # noqa: E402


@pytest.fixture
def fake() -> Iterator[FakeGoogle]:
    state = FakeGoogle()
    server = start(state)
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _no_outside_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The developer's own gcloud/ADC files must not leak into these tests."""
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    for name in ("GOOGLE_CREDENTIALS_PATH", "CO_GOOGLE_API_ENDPOINT", "CO_GOOGLE_TIME_ZONE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def token(co_dirs: Path, fake: FakeGoogle) -> Path:
    return write_token(co_dirs / "google-token.json", fake)


@pytest.fixture
def google_settings(fake: FakeGoogle) -> dict[str, Any]:
    return {
        "google": {
            "api_endpoint": fake.url,
            "token_uri": f"{fake.url}/token",
            "retry_delay": 0,
            "time_zone": "Europe/Paris",
            "use_adc": False,
        }
    }


@pytest.fixture
def deps(co_dirs: Path, token: Path, google_settings: dict[str, Any], tmp_path: Path) -> Any:
    from co_core.testing import make_deps

    made = make_deps(google_settings, workspace=tmp_path)
    yield made
    made.close()


@pytest.fixture
def run_tool(deps: Any) -> Callable[..., Any]:
    """Call a tool the way pydantic-ai does: with a RunContext carrying Co's deps."""
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    def run(tool: Callable[..., Any], **args: Any) -> Any:
        ctx = RunContext(deps=deps, model=TestModel(), usage=RunUsage())
        return tool(ctx, **args)

    return run
