"""Commands are offered only with a sandbox backend to run them; file tools always are."""

from __future__ import annotations

from pathlib import Path

import co_shell.plugin
import pytest

from co_core.testing import status_rows, use_plugin


def row(settings: dict) -> object:
    with use_plugin(co_shell.plugin, name="shell", settings=settings) as app:
        return status_rows(app)["shell tools"]


@pytest.fixture
def empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No bwrap on PATH and no Docker engine named: a machine with no sandbox at all."""
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("DOCKER_HOST", "")
    monkeypatch.setattr(co_shell.plugin, "DOCKER_SOCKET", str(tmp_path / "no-docker.sock"))


def test_bubblewrap_on_path_makes_commands_ready(
    co_dirs: Path, tmp_path: Path, monkeypatch
) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "bwrap").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    found = row({"shell": {"sandbox": "bubblewrap"}})
    assert (found.state, found.detail) == ("ok", "offered (8 tools)")


def test_without_bubblewrap_only_the_commands_are_held_back(
    co_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    monkeypatch.setenv("DOCKER_HOST", "unix:///somewhere/docker.sock")
    found = row({"shell": {"sandbox": "bubblewrap"}})
    assert found.state == "warn"
    assert found.detail.startswith("6 of 8 offered; not run_shell_command, run_python:")
    assert "bubblewrap is not installed: run `co config set shell.sandbox docker`" in found.detail


def test_a_fallback_that_works_keeps_commands_offered(
    co_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    monkeypatch.setenv("DOCKER_HOST", "unix:///somewhere/docker.sock")
    found = row({"shell": {"sandbox": "bubblewrap", "fallback": "docker"}})
    assert found.state == "ok"


@pytest.mark.usefixtures("empty_path")
def test_no_backend_at_all_says_what_to_install(co_dirs: Path) -> None:
    found = row({"shell": {"sandbox": "docker"}})
    assert found.state == "warn"
    assert "install bubblewrap (`apt install bubblewrap`) or Docker" in found.detail


def test_no_sandbox_by_choice_is_ready(co_dirs: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert row({"shell": {"sandbox": "none"}}).state == "ok"


@pytest.mark.usefixtures("empty_path")
def test_auto_with_no_backend_holds_commands_back_and_says_what_to_install(co_dirs: Path) -> None:
    found = row({"shell": {"sandbox": "auto"}})
    assert found.state == "warn"
    assert found.detail.startswith("6 of 8 offered; not run_shell_command, run_python:")
    assert "no sandbox here (neither Docker nor bubblewrap): install bubblewrap" in found.detail


def test_auto_with_either_backend_offers_commands(
    co_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    monkeypatch.setenv("DOCKER_HOST", "unix:///somewhere/docker.sock")
    assert row({"shell": {"sandbox": "auto"}}).state == "ok"
