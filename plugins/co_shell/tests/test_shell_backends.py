"""Choosing, reusing and reporting sandbox backends: Docker lifecycle, fallback, none, status."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from co_shell.checks import sandbox_check
from co_shell.keys import SANDBOX
from co_shell.sandbox import SandboxUnavailable, make_sandbox
from shell_testlib import chown_tree, make_workspace, require_backend, sandbox_for, settings_for

from co_core.testing import make_app

NO_ENGINE = "unix:///nonexistent/docker.sock"


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = make_workspace()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


# -- what one command leaves for the next -------------------------------------------------------

# A Python user-site .pth file under HOME (/tmp) runs its import line in every later python3.
PLANT_PTH = (
    "d=$(python3 -c 'import site; print(site.getusersitepackages())') && mkdir -p \"$d\" && "
    "echo \"import os; open('/workspace/OWNED', 'w')\" > \"$d/planted.pth\" && "
    "mkdir -p /tmp/.config/git && echo '[core]' > /tmp/.gitconfig"
)


@pytest.mark.parametrize("backend", ["docker", "bubblewrap"])
def test_each_command_starts_with_an_empty_tmp_and_home(backend: str, workspace: Path) -> None:
    """What a command leaves in /tmp (the commands' HOME: ~/.gitconfig, ~/.config, Python's
    user site) cannot change what a later command runs: each starts with an empty /tmp."""
    sandbox = sandbox_for(backend, workspace, require_backend(backend))
    try:
        planted = sandbox.run(["bash", "-c", PLANT_PTH])
        assert planted.exit_code == 0, planted.output
        assert sandbox.run(["ls", "-A", "/tmp"]).output == ""
        assert sandbox.run(["python3", "-c", "pass"]).exit_code == 0
        assert not (workspace / "OWNED").exists()
    finally:
        sandbox.close()


# -- docker lifecycle ---------------------------------------------------------------------------


def test_docker_reuses_one_container_per_workspace(workspace: Path) -> None:
    image = require_backend("docker")
    (workspace / ".git").mkdir()  # a repository: the container holds no placeholder of Co's
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    chown_tree(workspace)
    first = sandbox_for("docker", workspace, image, keep_container=True)
    first.run(["sh", "-c", "echo one > /tmp/marker"])
    container_id = first.container().id
    first.close()  # keep_container: left running for reuse
    second = sandbox_for("docker", workspace, image, keep_container=False)
    assert second.container().id == container_id
    assert second.run(["ls", "-A", "/tmp"]).output == ""  # same container, but /tmp emptied
    second.close()  # removed this time
    import docker

    client = docker.from_env()
    with pytest.raises(docker.errors.NotFound):
        client.containers.get(container_id)
    client.close()


def test_a_container_holding_a_placeholder_is_not_kept(workspace: Path) -> None:
    """No repository here: the container's read-only .git is Co's empty placeholder, so
    even with keep_container the container goes when the session ends, and with it the
    placeholder: nothing of Co's stays in the folder."""
    image = require_backend("docker")
    (workspace / "notes.txt").write_text("mine\n")
    chown_tree(workspace)
    box = sandbox_for("docker", workspace, image, keep_container=True)
    box.run(["true"])
    container_id = box.container().id
    assert (workspace / ".git").is_dir()  # held while the container runs
    box.close()
    assert sorted(p.name for p in workspace.iterdir()) == ["notes.txt"]
    import docker

    client = docker.from_env()
    with pytest.raises(docker.errors.NotFound):
        client.containers.get(container_id)
    client.close()


def test_docker_container_is_hardened(workspace: Path) -> None:
    image = require_backend("docker")
    box = sandbox_for("docker", workspace, image, memory="300m", pids=99, cpus=0.5)
    try:
        box.run(["true"])
        box.container().reload()
        host = box.container().attrs["HostConfig"]
        assert host["NetworkMode"] == "none"
        assert host["Memory"] == 300 * 1024 * 1024
        assert host["PidsLimit"] == 99
        assert host["NanoCpus"] == 500_000_000
        assert host["ReadonlyRootfs"] is True
        assert host["CapDrop"] == ["ALL"]
    finally:
        box.close()


def test_docker_network_setting_rebuilds_the_container(workspace: Path) -> None:
    image = require_backend("docker")
    closed = sandbox_for("docker", workspace, image, keep_container=True)
    closed.run(["true"])
    old = closed.container().id
    closed.close()
    opened = sandbox_for("docker", workspace, image, network=True)
    try:
        assert opened.container().id != old
        assert opened.container().attrs["HostConfig"]["NetworkMode"] == "bridge"
    finally:
        opened.close()


def test_docker_host_is_honoured(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    image = require_backend("docker")
    monkeypatch.setenv("DOCKER_HOST", "unix:///var/run/docker.sock")
    box = sandbox_for("docker", workspace, image)
    assert box.run(["echo", "via DOCKER_HOST"]).output == "via DOCKER_HOST\n"
    box.close()
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    with pytest.raises(SandboxUnavailable, match="nonexistent/docker.sock") as caught:
        sandbox_for("docker", workspace, image)
    assert "start it" in str(caught.value)


def test_missing_image_is_a_clear_error(workspace: Path) -> None:
    require_backend("docker")
    box = sandbox_for("docker", workspace, "co-no-such-image:404")
    with pytest.raises(SandboxUnavailable, match="co-no-such-image:404.*shell.image"):
        box.run(["true"])


# -- choosing ----------------------------------------------------------------------------------


def test_unavailable_backend_without_fallback_says_how_to_fix(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    with pytest.raises(SandboxUnavailable, match="not reachable.*bubblewrap"):
        make_sandbox(settings_for("docker"), workspace, print)


def test_configured_fallback_is_used_and_said(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_backend("bubblewrap")
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    said: list[str] = []
    box = make_sandbox(settings_for("docker", fallback="bubblewrap"), workspace, said.append)
    assert box.name == "bubblewrap"
    assert "fallback" in said[0] and "not reachable" in said[0]
    assert box.run(["echo", "ok"]).output == "ok\n"


def test_none_backend_warns_and_still_limits(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CO_TEST_SECRET_TOKEN", "leak-host-token")
    said: list[str] = []
    box = make_sandbox(settings_for("none", timeout=1.0), workspace, said.append)
    assert "no sandbox" in said[0]
    env = box.run(["sh", "-c", "env; pwd"])
    assert "leak-host-token" not in env.output
    assert str(workspace) in env.output
    slow = box.run(["sh", "-c", "sleep 100"])
    assert slow.timed_out


# -- status ----------------------------------------------------------------------------------


def _check(co_dirs: Path, shell: dict[str, Any]) -> Any:
    app = make_app({"shell": shell})
    return sandbox_check(app.settings)


def test_status_is_loud_about_no_sandbox(co_dirs: Path) -> None:
    result = _check(co_dirs, {"sandbox": "none"})
    assert result.state == "warn" and "NO SANDBOX" in result.detail


def test_chat_prompt_line_is_loud_about_no_sandbox(co_dirs: Path) -> None:
    bare = make_app({"shell": {"sandbox": "none"}})
    assert dict(bare.host.call_each("prompt_markers", settings=bare.settings))["shell"] == (
        "no-sandbox"
    )
    boxed = make_app({"shell": {"sandbox": "bubblewrap"}})
    assert dict(boxed.host.call_each("prompt_markers", settings=boxed.settings))["shell"] is None


def test_status_reports_docker_problems_and_fallback(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    failed = _check(co_dirs, {"sandbox": "docker"})
    assert failed.state == "fail" and "not reachable" in failed.detail
    require_backend("bubblewrap")
    fallback = _check(co_dirs, {"sandbox": "docker", "fallback": "bubblewrap"})
    assert fallback.state == "warn" and "falling back to bubblewrap" in fallback.detail


def test_status_ok_for_working_backends(co_dirs: Path) -> None:
    require_backend("bubblewrap")
    assert _check(co_dirs, {"sandbox": "bubblewrap"}).state == "ok"
    image = require_backend("docker")
    result = _check(co_dirs, {"sandbox": "docker", "image": image})
    assert result.state == "ok" and image in result.detail
    missing = _check(co_dirs, {"sandbox": "docker", "image": "co-no-such-image:404"})
    assert missing.state == "warn" and "not there yet" in missing.detail


def test_plugin_declares_tools_with_risks_and_permissions(co_dirs: Path) -> None:
    app = make_app({})
    tools = {t.name: t for t in app.host.tools() if t.plugin == "shell"}
    assert set(tools) == {
        "run_shell_command", "run_python", "list_files", "read_file", "search_files",
        "write_file", "edit_file", "set_file_value",
    }  # fmt: skip
    assert tools["run_shell_command"].risk == "exec"
    assert tools["run_shell_command"].permission_key({"cmd": "ls -la"}) == "shell:exec:ls -la"
    assert tools["write_file"].permission_key({"path": "a.txt"}) == "fs:write:a.txt"
    assert tools["read_file"].risk == "read" and tools["edit_file"].risk == "write"
    assert tools["search_files"].risk == "read" and tools["set_file_value"].risk == "write"


def test_sandbox_is_a_deps_resource_closed_on_exit(co_dirs: Path, workspace: Path) -> None:
    image = require_backend("docker")
    from co_core.testing import make_deps

    deps = make_deps(
        {"shell": {"sandbox": "docker", "image": image, "keep_container": False}},
        workspace=workspace,
    )
    box = deps.resource(SANDBOX)
    assert box.name == "docker" and box.run(["echo", "hi"]).output == "hi\n"
    container_id = box.container().id
    assert deps.close() == []
    import docker

    client = docker.from_env()
    with pytest.raises(docker.errors.NotFound):
        client.containers.get(container_id)
    client.close()


def test_missing_bubblewrap_is_a_clear_error(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from co_shell.sandbox.bwrap_sandbox import probe

    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH
    probe.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="bwrap is not installed.*apt install"):
            sandbox_for("bubblewrap", workspace)
    finally:
        probe.cache_clear()


def test_bubblewrap_cgroup_limits_where_available() -> None:
    import subprocess

    from co_shell.sandbox.cgroups import Cgroup

    group = Cgroup.create(200 * 1024 * 1024, 0.5, 42)
    if group is None:
        pytest.skip("no writable cgroup hierarchy here (bubblewrap uses rlimits only)")
    try:
        limits = {}
        for folder in group.folders:
            for name in (
                "pids.max",
                "memory.max",
                "memory.limit_in_bytes",
                "cpu.max",
                "cpu.cfs_quota_us",
            ):
                if (folder / name).exists():
                    limits[name] = (folder / name).read_text().split()[0]
        assert limits["pids.max"] == "42"
        assert limits.get("memory.max", limits.get("memory.limit_in_bytes")) == str(
            200 * 1024 * 1024
        )
        assert limits.get("cpu.max", limits.get("cpu.cfs_quota_us")) == "50000"
        child = subprocess.Popen(["sleep", "5"], preexec_fn=group.join)
        try:
            procs = (group.folders[0] / "cgroup.procs").read_text().split()
            assert str(child.pid) in procs
        finally:
            child.kill()
            child.wait()
    finally:
        group.remove()
    assert not any(folder.exists() for folder in group.folders)


def test_bubblewrap_as_root_says_when_uid_1000_cannot_reach_the_workspace(tmp_path: Path) -> None:
    import os

    if os.getuid() != 0:
        pytest.skip("only Co running as root hands commands to uid 1000")
    require_backend("bubblewrap")
    private = tmp_path / "private"  # pytest's tmp dirs are 0700 root
    private.mkdir()
    with pytest.raises(SandboxUnavailable, match="uid 1000.*accessible"):
        sandbox_for("bubblewrap", private)


def test_hooks_and_sandbox_layer_stay_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, co_shell.plugin, co_shell.sandbox, co_shell.sandbox.bwrap_sandbox;"
        "heavy = [m for m in ('pydantic_ai', 'docker') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"  # the sandbox layer knows nothing of pydantic-ai


def test_docker_container_removed_behind_our_back_is_recreated(workspace: Path) -> None:
    image = require_backend("docker")
    box = sandbox_for("docker", workspace, image)
    try:
        box.run(["true"])
        box.container().remove(force=True)  # e.g. `docker rm -f` by the user
        assert box.run(["echo", "back"]).output == "back\n"
    finally:
        box.close()
