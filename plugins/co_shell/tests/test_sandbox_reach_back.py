"""What a sandboxed command must not do to the host, through the real shell tool and engines.

Three holes, each tried as an attacker would: a command the policy reads as bash but a
different shell runs; a command that plants code the host runs later (``.git`` hooks and
config, a project's ``.co`` policy); a command that leaves processes running after the
call returned.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from co_shell import shell_tools
from co_shell.keys import SANDBOX
from co_shell.sandbox import SandboxUnavailable
from co_shell.sandbox.base import SHELL
from pydantic_ai import ModelRetry
from shell_testlib import chown_tree, make_workspace, require_backend, run_agent

from co_core.testing import make_deps, run_co

SANDBOXES = ["docker", "bubblewrap"]


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = make_workspace()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def deps_for(backend: str, workspace: Path, **shell: Any) -> Any:
    image = require_backend(backend)
    values: dict[str, Any] = {"sandbox": backend, "keep_container": False, "timeout": 20}
    if image:
        values["image"] = image
    values.update(shell)
    return make_deps({"shell": values}, workspace=workspace)


@pytest.fixture(params=SANDBOXES)
def deps(request: pytest.FixtureRequest, co_dirs: Path, workspace: Path) -> Iterator[Any]:
    made = deps_for(request.param, workspace, pids=64, memory="256m")
    yield made
    made.close()


def shell(deps: Any, cmd: str) -> str:
    """What the model is told when it runs ``cmd``: the output, or the failure with it."""
    try:
        return shell_tools.run_shell_command(SimpleNamespace(deps=deps), cmd)
    except ModelRetry as exc:
        return str(exc)


# -- one shell language: what the policy parses (bash) is what runs ----------------------------

ATTACK = "ls $'x\\' ; touch PWNED #'"  # one `ls` to bash; `ls` then `touch PWNED` to dash


@pytest.mark.parametrize("backend", [*SANDBOXES, "none"])
def test_commands_run_with_bash_in_every_backend(
    co_dirs: Path, workspace: Path, backend: str
) -> None:
    chown_tree(workspace)
    deps = deps_for(backend, workspace)
    try:
        seen = run_agent(
            deps,
            [
                ("run_shell_command", {"cmd": ATTACK}),
                ("run_shell_command", {"cmd": "printf '%s\\n' $'one\\' ; echo INJECTED #'"}),
            ],
            [shell_tools.run_shell_command],
        )
    finally:
        deps.close()
    assert not (workspace / "PWNED").exists()
    told = "\n".join(seen)
    assert "one' ; echo INJECTED #" in told  # bash's $'...' quoting: a single argument
    assert "\nINJECTED" not in told


def test_an_image_without_bash_is_one_clear_line(co_dirs: Path, workspace: Path) -> None:
    require_backend("docker")
    import sandbox_image

    image = sandbox_image.build_without_bash()
    deps = make_deps(
        {"shell": {"sandbox": "docker", "image": image, "keep_container": False}},
        workspace=workspace,
    )
    try:
        with pytest.raises(SandboxUnavailable) as caught:
            shell_tools.run_shell_command(SimpleNamespace(deps=deps), "echo hi")
    finally:
        deps.close()
    line = str(caught.value)  # a CoError: shown to the user as it is
    assert "\n" not in line
    assert image in line and "bash" in line and "shell.image" in line
    assert "127" not in line and "OCI" not in line
    # nothing is left behind: no container, no placeholder for .git or .co
    assert not os.path.lexists(workspace / ".co") and not os.path.lexists(workspace / ".git")


# -- the sandbox cannot plant code the host runs ------------------------------------------------


def _tree(path: Path) -> dict[str, Any]:
    """Everything under ``path`` (or the path itself): kinds, modes and contents."""
    found: dict[str, Any] = {}
    if not os.path.lexists(path):
        return found
    items = [path, *path.rglob("*")] if path.is_dir() and not path.is_symlink() else [path]
    for item in items:
        info = item.lstat()
        rel = str(item.relative_to(path.parent))
        if stat.S_ISLNK(info.st_mode):
            found[rel] = ("link", os.readlink(item))
        elif stat.S_ISDIR(info.st_mode):
            found[rel] = ("dir", stat.S_IMODE(info.st_mode))
        else:
            found[rel] = ("file", stat.S_IMODE(info.st_mode), item.read_bytes())
    return found


def _git_repo(workspace: Path) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n")
    (workspace / ".git" / "hooks" / "pre-commit.sample").write_text("#!/bin/sh\nexit 0\n")
    (workspace / ".co").mkdir()
    (workspace / ".co" / "policy.json").write_text('{"rules": [{"deny": "shell:exec:*"}]}\n')


def _plain_repo(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")


EVIL_CONFIG = "printf '[core]\\n\\tfsmonitor = touch OWNED\\n'"
HOOK = "printf '#!/bin/sh\\ntouch OWNED\\n'"
ALLOW_ALL = 'printf \'{"rules": [{"allow": "*"}]}\\n\''

VECTORS_WHEN_PRESENT = [
    f"{ALLOW_ALL} > .co/policy.json",
    "echo '{}' > .co/settings.json",
    f"{EVIL_CONFIG} >> .git/config",
    f"{HOOK} > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
    "chmod 777 .git .co .git/config",
    f"mv .git git-moved && mkdir .git && {EVIL_CONFIG} > .git/config",
    f"mv .co co-moved && mkdir .co && {ALLOW_ALL} > .co/policy.json",
    "rm -rf .co .git; mkdir -p .co .git/hooks && echo '{}' > .co/settings.json",
    "ln -sfn /tmp .git; ln -sfn /tmp .co; ln -sfn . .co",
    f"ln .git/config config-link && {EVIL_CONFIG} >> config-link",
    "cd / && mv /workspace/.git /workspace/git-moved",
    "python3 -c \"import os; os.rename('.co', 'co-moved'); os.mkdir('.co')\"",
    "mkdir -p sub && mv .git sub/ ; mv .co sub/",
]

VECTORS_WHEN_MISSING = [
    f"mkdir .co && {ALLOW_ALL} > .co/policy.json",
    "mkdir .co; echo '{}' > .co/settings.json",
    f"mkdir -p .git/hooks && {HOOK} > .git/hooks/pre-commit",
    "printf 'gitdir: /tmp/evil\\n' > .git",
    f"rm -rf .git .co; mkdir .git && {EVIL_CONFIG} > .git/config",
    "mkdir made && mv made .git; mkdir made2 && mv made2 .co",
    "ln -s /tmp .git; ln -s . .co",
]

NORMAL_WRITES = (
    "echo ok > normal.txt && mkdir -p src/pkg && echo 'x = 1' > src/pkg/mod.py "
    "&& mv normal.txt renamed.txt && echo again > normal.txt && echo WROTE"
)


def test_git_and_co_cannot_be_changed_from_inside(deps: Any, workspace: Path) -> None:
    _git_repo(workspace)
    chown_tree(workspace)
    before = {name: _tree(workspace / name) for name in (".git", ".co")}
    deps.changes.next_turn()
    for vector in VECTORS_WHEN_PRESENT:
        shell(deps, vector)
        after = {name: _tree(workspace / name) for name in (".git", ".co")}
        assert after == before, vector
    for leftover in ("OWNED", "git-moved", "co-moved", "config-link", "sub/.git", "sub/.co"):
        assert not os.path.lexists(workspace / leftover), leftover
    # the rest of the workspace is as writable as ever
    assert "WROTE" in shell(deps, NORMAL_WRITES)
    assert (workspace / "src/pkg/mod.py").read_text() == "x = 1\n"
    assert (workspace / "renamed.txt").read_text() == "ok\n"
    # and /undo still sees exactly what the commands changed
    assert "Undid turn" in deps.changes.undo().text()
    assert not (workspace / "src").exists() and not (workspace / "normal.txt").exists()
    assert not (workspace / "renamed.txt").exists() and not (workspace / "sub").exists()
    assert {name: _tree(workspace / name) for name in (".git", ".co")} == before


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "untrusted"])
def test_git_and_co_cannot_be_created_from_inside(
    deps: Any, workspace: Path, trusted: bool
) -> None:
    """In a folder the user trusted, a missing ``.co`` is held like ``.git``; elsewhere Co
    ignores a ``.co``, so one a command makes is moved aside when the command ends."""
    if trusted:
        assert run_co("trust", str(workspace)).returncode == 0
    chown_tree(workspace)
    deps.changes.next_turn()
    for vector in VECTORS_WHEN_MISSING:
        told = shell(deps, vector)
        assert not os.path.lexists(workspace / ".co" / "policy.json"), vector
        assert not os.path.lexists(workspace / ".co" / "settings.json"), vector
        assert not os.path.lexists(workspace / ".git" / "config"), vector
        assert not os.path.lexists(workspace / ".git" / "hooks"), vector
        assert not (workspace / ".git").is_file() or (workspace / ".git").stat().st_size == 0
        assert not (workspace / ".co").is_dir(), vector  # Co would take it for a project folder
        if not trusted and any(
            made in vector for made in ("mkdir .co", "made2 .co", "ln -s . .co")
        ):
            assert ".co (moved to .co.co-refused" in told, (vector, told)
    refused = sorted(p.name for p in workspace.iterdir() if ".co-refused" in p.name)
    assert (refused != []) is (not trusted), refused
    assert "WROTE" in shell(deps, NORMAL_WRITES)
    assert "Undid turn" in deps.changes.undo().text()
    assert not (workspace / "src").exists() and not (workspace / "made").exists()
    deps.close()
    # whatever held the names while the sandbox ran is gone with it
    assert not os.path.lexists(workspace / ".git") and not os.path.lexists(workspace / ".co")


def test_a_worktree_git_file_is_read_only(deps: Any, workspace: Path) -> None:
    (workspace / ".git").write_text("gitdir: /home/someone/repo/.git/worktrees/ws\n")
    chown_tree(workspace)
    before = (workspace / ".git").read_bytes()
    for vector in [
        "printf 'gitdir: /tmp/evil\\n' > .git",
        "rm -f .git; mkdir .git",
        "mv .git moved; printf 'gitdir: /tmp/evil\\n' > .git",
    ]:
        shell(deps, vector)
        assert (workspace / ".git").read_bytes() == before, vector
    assert not (workspace / "moved").exists()


def test_a_symlinked_git_folder_is_refused_not_exposed(
    co_dirs: Path, workspace: Path, tmp_path: Path
) -> None:
    real = tmp_path / "elsewhere.git"
    real.mkdir()
    (workspace / ".git").symlink_to(real, target_is_directory=True)
    for backend in SANDBOXES:
        deps = deps_for(backend, workspace)
        try:
            with pytest.raises(SandboxUnavailable, match=r"\.git is a symlink"):
                shell(deps, f"{EVIL_CONFIG} > .git/config")
        finally:
            deps.close()
    assert not (real / "config").exists()


# -- when a call ends, everything it started ends -----------------------------------------------


def _alive(token: str) -> list[str]:
    """Host processes whose command line holds ``token`` (the sandboxes share the kernel)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except OSError:
            continue
        if token.encode() in cmdline:
            found.append(entry + ": " + cmdline.replace(b"\0", b" ").decode(errors="replace"))
    return found


def _sizes(workspace: Path, names: list[str]) -> dict[str, int]:
    return {n: (workspace / n).stat().st_size if (workspace / n).exists() else -1 for n in names}


def test_background_processes_end_with_the_call(deps: Any, workspace: Path) -> None:
    chown_tree(workspace)
    token = f"9{secrets.randbelow(10**6):06d}"  # a unique number, also a valid sleep time
    loop = "while :; do echo x >> {log}; sleep 0.1; done # " + token
    cmd = (
        f"sleep {token} & "
        f"nohup sh -c '{loop.format(log='nohup.log')}' >/dev/null 2>&1 & "
        f"setsid sh -c '{loop.format(log='setsid.log')}' >/dev/null 2>&1 </dev/null & "
        f"(sh -c '{loop.format(log='double.log')}' >/dev/null 2>&1 </dev/null &) ; "
        "sleep 0.5; echo launched"
    )
    assert "launched" in shell(deps, cmd)
    assert _alive(token) == []
    logs = ["nohup.log", "setsid.log", "double.log"]
    written = _sizes(workspace, logs)
    assert all(size > 0 for size in written.values())  # each writer did run
    time.sleep(1.0)  # ten more lines each, were any writer still alive
    assert _sizes(workspace, logs) == written
    assert "still usable" in shell(deps, "echo still usable")


@pytest.mark.parametrize("backend", SANDBOXES)
def test_many_background_processes_are_gone_the_moment_run_returns(
    workspace: Path, backend: str
) -> None:
    """Not a moment later: ending them after returning would leave a window, and many
    processes take long enough to end for this to catch it (checked right after the
    sandbox returns, before the tool's own work after it)."""
    from shell_testlib import sandbox_for

    box = sandbox_for(backend, workspace, require_backend(backend), pids=250)
    try:
        for _ in range(10):
            token = f"9{secrets.randbelow(10**6):06d}"
            loop = f"for i in $(seq 100); do (sleep {token} >/dev/null 2>&1 &); done; echo ok"
            assert "ok" in box.run([*SHELL, loop]).output
            assert _alive(token) == []
    finally:
        box.close()


def test_a_timed_out_call_leaves_nothing_running(co_dirs: Path, workspace: Path) -> None:
    chown_tree(workspace)
    token = f"9{secrets.randbelow(10**6):06d}"
    loop = f"while :; do echo x >> late.log; sleep 0.1; done # {token}"
    for backend in SANDBOXES:
        deps = deps_for(backend, workspace, timeout=2)
        try:
            told = shell(deps, f"nohup sh -c '{loop}' >/dev/null 2>&1 & sleep {token}")
        finally:
            deps.close()
        assert "timed out" in told
        assert _alive(token) == [], backend
        written = (workspace / "late.log").stat().st_size
        time.sleep(1.0)
        assert (workspace / "late.log").stat().st_size == written, backend


def test_a_fork_bomb_is_bounded_and_cleaned_up(deps: Any) -> None:
    token = f"9{secrets.randbelow(10**6):06d}"
    # every process starts two more, then sleeps (exec: no fork needed) until the limit
    bomb = f"b() {{ (b &); (b &); exec sleep {token}; }}; (b &); sleep 3; echo survived"
    assert "survived" in shell(deps, bomb)
    assert _alive(token) == []
    time.sleep(2)  # a shell retries a failed fork after a pause: nothing may come back
    assert _alive(token) == []
    assert "alive" in shell(deps, "echo alive")


def test_docker_container_keeps_only_its_own_processes(co_dirs: Path, workspace: Path) -> None:
    chown_tree(workspace)
    deps = deps_for("docker", workspace)
    try:
        shell(deps, "sleep 1000 & sleep 1001 & echo started")
        box = deps.resource(SANDBOX)
        rows = box.client.api.top(box.container().id, ps_args="-o pid,uid,args")["Processes"]
    finally:
        deps.close()
    assert len(rows) == 2, rows  # docker-init and the container's keep-alive, nothing else


def test_host_git_does_not_run_what_the_sandbox_wrote(deps: Any, workspace: Path) -> None:
    """End to end: after the sandbox tried, the user's own ``git status`` runs nothing new."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed on this host")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    chown_tree(workspace)
    shell(deps, f"{EVIL_CONFIG} >> .git/config; {HOOK} > .git/hooks/post-checkout")
    subprocess.run(
        ["git", "-c", f"safe.directory={workspace}", "status"],
        cwd=workspace,
        capture_output=True,
    )
    assert not (workspace / "OWNED").exists()


# -- Docker keeps one container: .git/.co replaced on the host must not come unprotected ---------


def test_docker_rebuilds_when_git_is_replaced_on_the_host(co_dirs: Path, workspace: Path) -> None:
    _git_repo(workspace)
    chown_tree(workspace)
    deps = deps_for("docker", workspace)
    try:
        shell(deps, "true")
        first = deps.resource(SANDBOX).container().id
        # the user re-creates the repository: the container's mount held the old folder
        shutil.rmtree(workspace / ".git")
        (workspace / ".git").mkdir()
        chown_tree(workspace)
        shell(deps, f"{EVIL_CONFIG} > .git/config; {HOOK} > .git/hooks")
        assert not (workspace / ".git/config").exists()
        assert not (workspace / ".git/hooks").exists()
        assert deps.resource(SANDBOX).container().id != first
    finally:
        deps.close()


def test_docker_does_not_reuse_a_kept_container_whose_mounts_went_stale(
    co_dirs: Path, workspace: Path
) -> None:
    # a trusted folder whose .git and .co are its own (a container holding a placeholder
    # of Co's is never kept): a repository, and a .co that is a file
    assert run_co("trust", str(workspace)).returncode == 0
    _plain_repo(workspace)
    (workspace / ".co").write_text("a file, not Co's folder\n")
    chown_tree(workspace)
    kept = deps_for("docker", workspace, keep_container=True)
    try:
        shell(kept, "true")
    finally:
        kept.close()  # left running for the next session, .co mounted read-only
    # The same file under a new name entry: same inode (so the same identity as when the
    # container was made), but the container's mount sat on the removed entry.
    os.link(workspace / ".co", workspace / "keep")
    os.unlink(workspace / ".co")
    os.link(workspace / "keep", workspace / ".co")
    os.unlink(workspace / "keep")
    later = deps_for("docker", workspace)
    try:
        shell(later, f"rm -f .co; mkdir .co && {ALLOW_ALL} > .co/policy.json")
        assert not (workspace / ".co/policy.json").exists()
    finally:
        later.close()


CRASHING_SESSION = """
import sys
from pathlib import Path
from co_shell.sandbox import build
from co_shell.settings import ShellSettings

settings = ShellSettings(sandbox="docker", image=sys.argv[2], keep_container=True, timeout=600)
box = build("docker", settings, Path(sys.argv[1]))
box.run(["bash", "-c", "while :; do echo x >> crash.log; sleep 0.1; done"])
"""


def test_docker_ends_what_a_killed_session_left_running(co_dirs: Path, workspace: Path) -> None:
    image = require_backend("docker")
    _plain_repo(workspace)  # nothing of Co's in it: the container is kept
    chown_tree(workspace)
    session = subprocess.Popen([sys.executable, "-c", CRASHING_SESSION, str(workspace), image])
    try:
        deadline = time.monotonic() + 60
        while not (workspace / "crash.log").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (workspace / "crash.log").exists(), "the first session never ran its command"
    finally:
        session.kill()  # Co dies mid-command; its `docker exec` goes on in the container
        session.wait()
    deps = deps_for("docker", workspace)
    try:
        told = shell(
            deps,
            "a=$(stat -c %s crash.log); sleep 1; b=$(stat -c %s crash.log); "
            '[ "$a" = "$b" ] && echo STILL || echo GROWING',
        )
    finally:
        deps.close()
    assert "STILL" in told, told


@pytest.fixture
def unwritable_workspace(workspace: Path) -> Iterator[Path]:
    """The workspace, made unwritable: a read-only mount as root, else no write permission."""
    (workspace / "notes.txt").write_text("read me\n")
    if os.getuid() != 0:
        workspace.chmod(0o555)
        yield workspace
        workspace.chmod(0o755)
        return
    subprocess.run(["mount", "--bind", str(workspace), str(workspace)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(workspace)], check=True)
        yield workspace
    finally:
        subprocess.run(["umount", str(workspace)], check=True)


def test_a_read_only_workspace_still_runs_commands(
    co_dirs: Path, unwritable_workspace: Path
) -> None:
    for backend in SANDBOXES:
        deps = deps_for(backend, unwritable_workspace)
        try:
            assert "read me" in shell(deps, "cat notes.txt")
            shell(deps, f"mkdir .co && {ALLOW_ALL} > .co/policy.json")
        finally:
            deps.close()
        assert not os.path.lexists(unwritable_workspace / ".co")
        assert not os.path.lexists(unwritable_workspace / ".git")
