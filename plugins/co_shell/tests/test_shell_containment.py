"""Containment, by attack, for each real sandbox backend (Docker engine, bubblewrap)."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from co_shell.sandbox.base import SHELL
from shell_testlib import chown_tree, make_workspace, require_backend, sandbox_for

BACKENDS = ["docker", "bubblewrap"]


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = make_workspace()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=BACKENDS)
def sandbox(request: pytest.FixtureRequest, workspace: Path) -> Iterator[Any]:
    image = require_backend(request.param)
    box = sandbox_for(request.param, workspace, image, timeout=20.0, memory="256m", pids=64)
    yield box
    box.close()


def sh(box: Any, cmd: str, timeout: float | None = None) -> Any:
    """``cmd`` run as run_shell_command runs it."""
    return box.run([*SHELL, cmd], timeout)


@pytest.fixture
def host_secret() -> Iterator[tuple[Path, str]]:
    """A world-readable host file outside the workspace: only the sandbox should stop us."""
    folder = Path(f"/tmp/co-host-{secrets.token_hex(4)}")
    folder.mkdir(mode=0o755)
    value = f"host-secret-{secrets.token_hex(8)}"
    path = folder / "secret.txt"
    path.write_text(value)
    path.chmod(0o644)
    yield path, value
    shutil.rmtree(folder, ignore_errors=True)


def test_host_secrets_are_not_in_the_environment(
    sandbox: Any, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-leak-openai")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-leak-token")
    monkeypatch.setenv("MY_SECRET", "leak-my-secret")
    (workspace / ".env").write_text("DOTENV_KEY=leak-dotenv\n")
    chown_tree(workspace)
    result = sh(sandbox, "env; echo done")
    assert result.exit_code == 0 and "done" in result.output
    assert "PATH=" in result.output
    for leak in ("sk-leak-openai", "ghp-leak-token", "leak-my-secret", "leak-dotenv"):
        assert leak not in result.output


def test_runs_as_non_root_in_the_workspace(sandbox: Any) -> None:
    result = sh(sandbox, "id -u; pwd")
    uid, cwd = result.output.split()
    assert uid != "0"
    assert cwd == "/workspace"


def test_files_written_land_in_the_workspace(sandbox: Any, workspace: Path) -> None:
    assert sh(sandbox, "echo made > made.txt").exit_code == 0
    assert (workspace / "made.txt").read_text() == "made\n"


def test_fork_bomb_is_contained(sandbox: Any) -> None:
    result = sh(sandbox, "bomb() { bomb | bomb & }; bomb; sleep 3; echo survived", timeout=8)
    # the host and the sandbox keep working afterwards
    after = sh(sandbox, "echo alive")
    assert after.exit_code == 0 and "alive" in after.output
    assert "fork" in result.output.lower()  # the process limit was hit


def test_memory_hog_is_killed(sandbox: Any) -> None:
    result = sh(sandbox, "python3 -c \"b = bytearray(1024 ** 3); print('got a gigabyte')\"")
    assert result.exit_code != 0
    assert "got a gigabyte" not in result.output


def test_sleep_times_out(sandbox: Any) -> None:
    result = sh(sandbox, "sleep 1000; echo finished", timeout=2)
    assert result.timed_out
    assert "finished" not in result.output
    assert sh(sandbox, "echo still usable").exit_code == 0


class _Listener:
    """A TCP server on every host address: the sandbox must not reach it."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("0.0.0.0", 0))
        self.server.listen()
        self.port = self.server.getsockname()[1]
        self.hits = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.hits += 1
            conn.close()


def _host_ip() -> str:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))
        return probe.getsockname()[0]
    except OSError:
        return "172.17.0.1"
    finally:
        probe.close()


def test_network_egress_fails(sandbox: Any) -> None:
    listener = _Listener()
    ip = _host_ip()
    code = f"import socket; socket.create_connection(('{ip}', {listener.port}), timeout=3); print('CONNECTED')"
    # control: from the host the same connection works, so this test can fail
    control = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "CONNECTED" in control.stdout
    # The listener counts in its own thread: wait until it has seen the control connection,
    # or that late count would look like a connection from the sandbox.
    deadline = time.monotonic() + 5
    while listener.hits < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    hits = listener.hits
    result = sandbox.run(["python3", "-c", code])
    assert "CONNECTED" not in result.output
    assert result.exit_code != 0
    assert listener.hits == hits
    listener.server.close()


def test_writes_outside_the_workspace_fail(sandbox: Any) -> None:
    marker = f"co-leak-{secrets.token_hex(4)}"
    for target in (f"/etc/{marker}", f"/usr/{marker}", f"/{marker}", f"/var/{marker}"):
        result = sh(sandbox, f"echo x > {target} && echo WROTE")
        assert "WROTE" not in result.output, target
        assert not os.path.exists(target)
    sh(sandbox, f"echo x > /tmp/{marker}")  # the sandbox's private /tmp
    assert not os.path.exists(f"/tmp/{marker}")


def test_host_files_outside_are_unreadable(sandbox: Any, host_secret: tuple[Path, str]) -> None:
    path, value = host_secret
    assert value in path.read_text()  # readable on the host
    result = sh(sandbox, f"cat {path}; ls -la {path.parent}; cat /root/.bashrc")
    assert value not in result.output


def test_symlink_to_outside_does_not_leak(
    sandbox: Any, workspace: Path, host_secret: tuple[Path, str]
) -> None:
    path, value = host_secret
    (workspace / "link").symlink_to(path)
    (workspace / "dirlink").symlink_to(path.parent, target_is_directory=True)
    result = sh(sandbox, "cat link; cat dirlink/secret.txt; echo x > link; echo y > dirlink/new")
    assert value not in result.output
    assert path.read_text() == value
    assert not (path.parent / "new").exists()


def test_output_is_capped_with_a_marker(workspace: Path) -> None:
    require_backend("bubblewrap")
    box = sandbox_for("bubblewrap", workspace, output_limit=4096)
    result = sh(box, "i=0; while [ $i -lt 3000 ]; do echo line-$i; i=$((i+1)); done")
    assert "bytes of output cut" in result.output
    assert "line-0\n" in result.output and "line-2999" in result.output
    assert len(result.output) < 5000


def test_engine_socket_and_home_are_not_reachable(sandbox: Any) -> None:
    if not os.path.exists("/var/run/docker.sock") and not os.path.isdir(os.path.expanduser("~")):
        pytest.skip("nothing to hide on this host")
    result = sh(
        sandbox,
        "ls -d /var/run/docker.sock /run/docker.sock ~root /root/.ssh 2>/dev/null; echo end",
    )
    assert "docker.sock" not in result.output
    assert "/root/.ssh" not in result.output
