"""``shell.sandbox = auto``: the first backend that can run here, said by ``co status``;
and settings changed while Co runs apply to the next command. Real engines throughout."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from co_shell.checks import sandbox_check
from co_shell.keys import SANDBOX
from co_shell.sandbox import SandboxUnavailable, build
from co_shell.sandbox.bwrap_sandbox import probe
from co_shell.sandbox.choice import choose
from shell_testlib import make_workspace, require_backend, settings_for

from co_core.testing import make_app, make_deps, write_settings

NO_ENGINE = "unix:///nonexistent/docker.sock"
ABSENT = "co-no-such-image:404"


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = make_workspace()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def hide_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bubblewrap not installed: nothing on PATH (the probe's cache forgets the real one)."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    probe.cache_clear()


@pytest.fixture(autouse=True)
def fresh_probe() -> Iterator[None]:
    yield
    probe.cache_clear()


def test_auto_takes_docker_when_its_image_is_here() -> None:
    image = require_backend("docker")
    assert choose(settings_for("auto", image)).backend == "docker"


def test_auto_takes_bubblewrap_when_the_image_is_not_here() -> None:
    require_backend("docker")
    require_backend("bubblewrap")
    picked = choose(settings_for("auto", ABSENT))
    assert (picked.backend, picked.note) == ("bubblewrap", f"Docker has no image {ABSENT}")


def test_auto_takes_bubblewrap_when_docker_is_not_running(monkeypatch) -> None:
    require_backend("bubblewrap")
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    picked = choose(settings_for("auto"))
    assert picked.backend == "bubblewrap"
    assert picked.note.startswith(f"Docker is not running at {NO_ENGINE}")


def test_auto_takes_docker_to_pull_when_bubblewrap_cannot_run(tmp_path, monkeypatch) -> None:
    require_backend("docker")  # builds the test image with the docker CLI, before PATH goes
    hide_bwrap(tmp_path, monkeypatch)
    picked = choose(settings_for("auto", ABSENT))
    assert picked.backend == "docker" and "bwrap is not installed" in picked.note


def test_auto_with_nothing_to_run_says_exactly_what_to_install(tmp_path, monkeypatch) -> None:
    hide_bwrap(tmp_path, monkeypatch)
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    with pytest.raises(SandboxUnavailable) as raised:
        build("auto", settings_for("auto"), Path("/tmp"))
    message = str(raised.value)
    assert message.startswith("no sandbox can run here: Docker is not running at")
    assert "`sudo apt install bubblewrap`" in message and "start Docker" in message
    assert "shell.sandbox none" in message


def test_auto_runs_commands_in_what_it_chose(workspace: Path) -> None:
    require_backend("docker")
    require_backend("bubblewrap")
    box = build("auto", settings_for("auto", ABSENT), workspace)
    try:
        assert box.name == "bubblewrap"
        assert box.run(["bash", "-c", "echo ok"]).output == "ok\n"
    finally:
        box.close()


def test_status_says_what_auto_chose_and_why(co_dirs: Path) -> None:
    require_backend("docker")
    require_backend("bubblewrap")
    row = sandbox_check(make_app({"shell": {"sandbox": "auto", "image": ABSENT}}).settings)
    assert row.state == "ok"
    assert row.detail.startswith(
        f"auto chose bubblewrap (Docker has no image {ABSENT}): bubblewrap works"
    )
    image = require_backend("docker")
    row = sandbox_check(make_app({"shell": {"sandbox": "auto", "image": image}}).settings)
    assert row.state == "ok" and row.detail.startswith("auto chose docker: Docker ")


def test_default_is_auto(co_dirs: Path) -> None:
    assert make_app({}).settings.section("shell").sandbox == "auto"


def test_a_settings_change_applies_to_the_next_command(co_dirs: Path, workspace: Path) -> None:
    """``co config set shell.sandbox ...`` while Co runs: no restart needed."""
    image = require_backend("docker")
    require_backend("bubblewrap")
    said: list[str] = []
    deps = make_deps(
        {"shell": {"sandbox": "bubblewrap", "keep_container": False}}, workspace=workspace
    )
    deps.warn = said.append
    box = deps.resource(SANDBOX)
    try:
        assert box.run(["uname", "-n"]).output == "co-sandbox\n"  # bwrap's hostname
        write_settings(
            {"shell": {"sandbox": "docker", "image": image, "keep_container": False}}, co_dirs
        )
        assert box.run(["bash", "-c", "echo hi"]).output == "hi\n"
        assert box.name == "docker"
        assert box.run(["uname", "-n"]).output != "co-sandbox\n"
        assert said == ["shell settings changed: commands now run in docker"]
        write_settings({"shell": {"sandbox": "bubblewrap", "timeout": 0.5}}, co_dirs)
        slow = box.run(["sleep", "5"])  # the new timeout applies too
        assert box.name == "bubblewrap" and slow.timed_out
    finally:
        assert deps.close() == []


def test_a_bad_change_is_said_once_and_the_old_settings_stay(
    co_dirs: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_backend("bubblewrap")
    deps = make_deps({"shell": {"sandbox": "bubblewrap"}}, workspace=workspace)
    box = deps.resource(SANDBOX)
    try:
        assert box.run(["bash", "-c", "echo one"]).output == "one\n"
        (co_dirs / "settings.json").write_text('{"shell": {"sandbox": "podman"}}')
        for word in ("two", "three"):
            assert box.run(["bash", "-c", f"echo {word}"]).output == f"{word}\n"
        assert box.name == "bubblewrap"
    finally:
        deps.close()
    warned = capsys.readouterr().err
    assert warned.count("shell.sandbox: Input should be") == 1
    assert "Co goes on with the settings it had" in warned


def test_an_image_that_cannot_be_pulled_is_said_in_whole_words(workspace: Path) -> None:
    """Offline (or an unknown image): the engine's reason, never cut mid-word, and the
    backend that works here instead."""
    import docker

    require_backend("docker")
    require_backend("bubblewrap")
    client = docker.from_env()
    try:
        client.images.pull(ABSENT)
        pytest.skip("the registry answered for an image that should not exist")
    except docker.errors.APIError as exc:
        engine = f"{type(exc).__name__}: {exc.explanation}"
    finally:
        client.close()
    box = build("docker", settings_for("docker", ABSENT), workspace)
    try:
        with pytest.raises(SandboxUnavailable) as raised:
            box.run(["true"])
    finally:
        box.close()
    message = str(raised.value)
    reason = message.split("could not be pulled (", 1)[1].split("); pull or build it", 1)[0]
    if reason.endswith(" …"):  # shortened: at a word boundary of the engine's own words
        kept = reason[:-2]
        assert engine.startswith(kept) and engine[len(kept)] == " "
    else:
        assert reason == " ".join(engine.split())
    assert message.endswith(
        "or use bubblewrap, which works here: `co config set shell.sandbox bubblewrap`"
    )
