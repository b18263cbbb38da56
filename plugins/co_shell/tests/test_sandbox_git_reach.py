"""What git executes from the workspace stays out of a sandboxed command's reach.

Each attack is a command run through the real shell tool in each sandbox, planting code
where the host's git would find it: nested repositories, submodules and their ``gitdir:``
files, the ``core.hooksPath`` folder (husky's layout included), scripts a config runs,
included config files, repositories made from scratch in subfolders (``.git`` folders and
files, bare-repository shapes, symlinks), an unpopulated submodule. Then the user's own
git runs on the host (``git status``, ``git commit``, in the project and in the
subfolder): nothing the command planted may run, and the workspace stays usable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from shell_testlib import chown_tree, fixture_workspace, sandbox_deps, shell_output

from co_core.testing import make_app

if shutil.which("git") is None:
    pytest.skip("git is not installed on this host", allow_module_level=True)

SANDBOXES = ["docker", "bubblewrap"]
PLANT = "touch OWNED"  # what every planted piece of code does, on the host if it runs
HOOK = f"printf '#!/bin/sh\\n{PLANT}\\n'"
FSMON = f"printf '[core]\\n\\tfsmonitor = {PLANT}\\n'"
GIT = ["git", "-c", "safe.directory=*", "-c", "protocol.file.allow=always",
       "-c", "user.name=u", "-c", "user.email=u@example.com"]  # fmt: skip


def git(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The user's git on the host (its environment, no Co involved)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run([*GIT, *args], cwd=where, capture_output=True, text=True, env=env)


workspace = pytest.fixture(fixture_workspace)


@pytest.fixture(params=SANDBOXES)
def deps(request: pytest.FixtureRequest, co_dirs: Path, workspace: Path) -> Iterator[Any]:
    made = sandbox_deps(request.param, workspace)
    yield made
    made.close()


shell = shell_output


def owned(workspace: Path) -> list[str]:
    return sorted(str(p.relative_to(workspace)) for p in workspace.rglob("OWNED*"))


def use_git_everywhere(workspace: Path, *folders: str) -> None:
    """What a user does next: status, a commit, in the project and in each subfolder."""
    git(workspace, "status")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "--allow-empty", "-m", "next")
    git(workspace, "x")  # the project's own alias, where it has one
    for folder in folders:
        if (workspace / folder).is_dir():
            git(workspace / folder, "status")
            git(workspace / folder, "commit", "-q", "--allow-empty", "-m", "next")
            git(workspace / folder, "log", "-1")


def project(workspace: Path, **config: str) -> None:
    git(workspace, "init", "-q")
    for key, value in config.items():
        git(workspace, "config", key.replace("_", "."), value)
    (workspace / "README").write_text("hi\n")
    git(workspace, "add", "README")
    git(workspace, "commit", "-q", "-m", "first")


# -- existing places git runs code from: read-only inside the sandbox --------------------------

PRESENT = {
    "nested repository": (
        lambda ws: (ws / "sub").mkdir() or git(ws / "sub", "init", "-q"),
        [f"{FSMON} >> sub/.git/config", f"{HOOK} > sub/.git/hooks/pre-commit; chmod +x sub/.git/hooks/pre-commit",
         f"mv sub/.git sub/old; mkdir -p sub/.git && {FSMON} > sub/.git/config"],
        ["sub"],
    ),
    "husky 4-8: core.hooksPath = .husky": (
        lambda ws: (ws / ".husky").mkdir() or git(ws, "config", "core.hooksPath", ".husky"),
        [f"{HOOK} > .husky/pre-commit; chmod +x .husky/pre-commit",
         f"rm -rf .husky; mkdir .husky; {HOOK} > .husky/pre-commit; chmod +x .husky/pre-commit"],
        [],
    ),
    "husky 9: core.hooksPath = .husky/_ running .husky/<hook>": (
        lambda ws: _husky9(ws),
        [f"{HOOK} > .husky/pre-commit; chmod +x .husky/pre-commit",
         f"{HOOK} > .husky/_/pre-commit; chmod +x .husky/_/pre-commit",
         f"{HOOK} > .husky/_/h"],
        [],
    ),
    "a script core.fsmonitor runs": (
        lambda ws: _script(ws, "tools/fsmon.sh", "core.fsmonitor", "tools/fsmon.sh"),
        [f"{HOOK} > tools/fsmon.sh", f"rm tools/fsmon.sh; {HOOK} > tools/fsmon.sh; chmod +x tools/fsmon.sh"],
        [],
    ),
    "an alias running a script": (
        lambda ws: _script(ws, "scripts/x.sh", "alias.x", "!./scripts/x.sh"),
        [f"{HOOK} > scripts/x.sh"],
        [],
    ),
    "an included config file in the work tree": (
        lambda ws: _include(ws),
        [f"{FSMON} >> gitconfig", f"rm gitconfig; {FSMON} > gitconfig"],
        [],
    ),
    "the pre-commit framework's configuration, named by .git/hooks/pre-commit": (
        lambda ws: _pre_commit(ws),
        ["printf 'entry: touch OWNED\\n' > .pre-commit-config.yaml",
         "rm .pre-commit-config.yaml; printf 'entry: touch OWNED\\n' > .pre-commit-config.yaml"],
        [],
    ),
    "a submodule's gitdir file": (
        lambda ws: _submodule(ws),
        ["printf 'gitdir: ../planted\\n' > lib/.git", "rm -f lib/.git; mkdir -p lib/.git",
         f"{FSMON} >> .git/modules/lib/config"],
        ["lib"],
    ),
}  # fmt: skip


def _husky9(ws: Path) -> None:
    (ws / ".husky" / "_").mkdir(parents=True)
    (ws / ".husky" / "_" / "h").write_text(
        '#!/bin/sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n'
        '[ -f "$s" ] || exit 0\nsh -e "$s"\n'
    )
    (ws / ".husky" / "_" / "pre-commit").write_text('#!/bin/sh\n. "$(dirname "$0")/h"\n')
    for name in ("h", "pre-commit"):
        (ws / ".husky" / "_" / name).chmod(0o755)
    (ws / ".husky" / "pre-commit").write_text("#!/bin/sh\ntrue\n")
    git(ws, "config", "core.hooksPath", ".husky/_")


def _script(ws: Path, rel: str, key: str, value: str) -> None:
    (ws / rel).parent.mkdir(parents=True, exist_ok=True)
    (ws / rel).write_text("#!/bin/sh\nexit 0\n")
    (ws / rel).chmod(0o755)
    git(ws, "config", key, value)


def _pre_commit(ws: Path) -> None:
    """A hook like the pre-commit framework's: it runs what a file in the work tree says."""
    (ws / ".pre-commit-config.yaml").write_text("entry: true\n")
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        "#!/bin/sh\n# hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit\n"
        "sh -c \"$(sed -n 's/^entry: //p' .pre-commit-config.yaml)\"\n"
    )
    hook.chmod(0o755)


def _include(ws: Path) -> None:
    (ws / "gitconfig").write_text("[user]\n\tname = u\n")
    git(ws, "config", "include.path", "../gitconfig")


def _submodule(ws: Path) -> None:
    other = ws.parent / f"{ws.name}-lib"
    other.mkdir()
    project(other)
    git(ws, "submodule", "add", "-q", str(other), "lib")
    git(ws, "commit", "-q", "-m", "lib")
    (ws / "planted").mkdir()
    for part in ("objects", "refs"):
        (ws / "planted" / part).mkdir()
    (ws / "planted" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / "planted" / "config").write_text(f"[core]\n\tfsmonitor = {PLANT}\n")


@pytest.mark.parametrize("attack", sorted(PRESENT))
def test_what_git_runs_is_read_only_inside(deps: Any, workspace: Path, attack: str) -> None:
    setup, vectors, folders = PRESENT[attack]
    project(workspace)
    setup(workspace)
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "set up")
    chown_tree(workspace)
    for vector in vectors:
        shell(deps, vector)
        use_git_everywhere(workspace, *folders)
        assert owned(workspace) == [], (attack, vector)
    # the rest of the workspace is as writable as ever
    assert "WROTE" in shell(deps, "mkdir -p src && echo x > src/a.txt && echo WROTE")
    shutil.rmtree(workspace.parent / f"{workspace.name}-lib", ignore_errors=True)


# -- what a command creates for git to find: moved aside before git can use it ------------------

CREATED = {
    "a new repository in a subfolder": (
        f"mkdir -p pkg/.git/objects pkg/.git/refs pkg/.git/hooks && echo 'ref: refs/heads/main' > pkg/.git/HEAD"
        f" && {FSMON} > pkg/.git/config && {HOOK} > pkg/.git/hooks/pre-commit && chmod +x pkg/.git/hooks/pre-commit",
        "pkg",
    ),
    "a .git file pointing at a planted git dir": (
        f"mkdir -p pkg stash/objects stash/refs && echo 'ref: refs/heads/main' > stash/HEAD"
        f" && {FSMON} > stash/config && printf 'gitdir: ../stash\\n' > pkg/.git",
        "pkg",
    ),
    "a .git symlink": (
        f"mkdir -p pkg stash/objects stash/refs"
        f" && echo 'ref: refs/heads/main' > stash/HEAD && {FSMON} > stash/config && ln -s ../stash pkg/.git",
        "pkg",
    ),
    "a bare repository shape": (
        f"mkdir -p bare/objects bare/refs && echo 'ref: refs/heads/main' > bare/HEAD && {FSMON} > bare/config",
        "bare",
    ),
    "a repository whose folders' times are set back": (
        f"mkdir -p old/er/.git/objects old/er/.git/refs && echo 'ref: refs/heads/main' > old/er/.git/HEAD"
        f" && {FSMON} > old/er/.git/config && touch -d '2001-01-01 00:00' old/er old",
        "old/er",
    ),
    "a deep repository": (
        f"mkdir -p a/b/c/.git/objects a/b/c/.git/refs && echo 'ref: refs/heads/main' > a/b/c/.git/HEAD"
        f" && {FSMON} > a/b/c/.git/config",
        "a/b/c",
    ),
}  # fmt: skip


@pytest.mark.parametrize("attack", sorted(CREATED))
def test_a_repository_made_inside_is_moved_aside(deps: Any, workspace: Path, attack: str) -> None:
    vector, folder = CREATED[attack]
    project(workspace)
    chown_tree(workspace)
    told = shell(deps, vector)
    assert "Co moved aside" in told, told
    use_git_everywhere(workspace, folder)
    assert owned(workspace) == [], attack
    found = git(workspace / folder, "rev-parse", "--absolute-git-dir").stdout.strip()
    assert found == str(workspace / ".git"), found  # git finds the project's own repository
    # nothing is lost: what the command made is still there, under another name
    assert list(workspace.rglob("*.co-refused*")), sorted(map(str, workspace.rglob("*")))


def test_a_nested_repository_moved_away_stays_and_its_replacement_goes(
    deps: Any, workspace: Path
) -> None:
    project(workspace)
    (workspace / "pkg").mkdir()
    git(workspace / "pkg", "init", "-q")
    chown_tree(workspace)
    told = shell(
        deps,
        "mv pkg pkg-moved && mkdir -p pkg/.git/objects pkg/.git/refs"
        f" && echo 'ref: refs/heads/main' > pkg/.git/HEAD && {FSMON} > pkg/.git/config",
    )
    assert "Co moved aside" in told and "pkg/.git" in told and "pkg-moved" not in told
    use_git_everywhere(workspace, "pkg", "pkg-moved")
    assert owned(workspace) == []
    assert (workspace / "pkg-moved" / ".git" / "HEAD").exists()  # the user's repository


def test_an_unpopulated_submodule_cannot_be_populated_with_planted_code(
    deps: Any, workspace: Path
) -> None:
    """``git status`` looks into every populated submodule, running its config: a command
    that makes ``lib/.git`` for a registered, not checked out submodule must not count."""
    project(workspace)
    _submodule(workspace)
    git(workspace, "commit", "-q", "-m", "lib")
    git(workspace, "submodule", "deinit", "-q", "-f", "lib")
    chown_tree(workspace)
    told = shell(
        deps,
        "mkdir -p lib/.git/objects lib/.git/refs && echo 'ref: refs/heads/main' > lib/.git/HEAD"
        f" && {FSMON} > lib/.git/config",
    )
    assert "Co moved aside" in told
    use_git_everywhere(workspace, "lib")
    assert owned(workspace) == []
    shutil.rmtree(workspace.parent / f"{workspace.name}-lib", ignore_errors=True)


def test_a_missing_hooks_folder_made_by_a_command_is_moved_aside(
    deps: Any, workspace: Path
) -> None:
    project(workspace, core_hooksPath=".githooks")
    chown_tree(workspace)
    told = shell(
        deps, f"mkdir .githooks && {HOOK} > .githooks/pre-commit && chmod +x .githooks/pre-commit"
    )
    assert "Co moved aside" in told and ".githooks" in told
    use_git_everywhere(workspace)
    assert owned(workspace) == []


def test_a_co_folder_made_in_a_subfolder_is_moved_aside(deps: Any, workspace: Path) -> None:
    chown_tree(workspace)
    told = shell(deps, "mkdir -p sub/.co && echo '{\"rules\": []}' > sub/.co/policy.json")
    assert "Co moved aside" in told
    assert not (workspace / "sub" / ".co").exists()
    assert (workspace / "sub" / ".co.co-refused" / "policy.json").exists()


def test_ordinary_work_is_not_moved(deps: Any, workspace: Path) -> None:
    project(workspace)
    chown_tree(workspace)
    told = shell(
        deps,
        "mkdir -p src/git docs && echo x > src/git/HEAD && echo y > docs/.gitignore && echo DONE",
    )
    assert "DONE" in told and "moved aside" not in told
    assert (workspace / "src/git/HEAD").exists()


# -- the file tools keep out of it too -----------------------------------------------------------


@pytest.mark.parametrize(
    "setup, path",
    [
        (lambda ws: _husky9(ws), ".husky/pre-commit"),
        (lambda ws: _husky9(ws), ".husky/_/h"),
        (
            lambda ws: _script(ws, "tools/fsmon.sh", "core.fsmonitor", "tools/fsmon.sh"),
            "tools/fsmon.sh",
        ),
        (lambda ws: git(ws, "config", "core.hooksPath", ".githooks"), ".githooks/pre-commit"),
        (lambda ws: _include(ws), "gitconfig"),
    ],
    ids=["husky script", "husky helper", "fsmonitor script", "missing hooks folder", "include"],
)
def test_write_file_keeps_out_of_what_git_runs_even_when_writes_are_allowed(
    co_dirs: Path, workspace: Path, setup: Any, path: str
) -> None:
    from co_core.testing import run_turn, script_calls

    project(workspace)
    setup(workspace)
    chown_tree(workspace)
    allow = {"policy": {"rules": [{"match": "fs:write:**", "effect": "allow"}]}}
    app = make_app({"shell": {"sandbox": "bubblewrap"}, **allow}, cwd=workspace)
    planted = f"#!/bin/sh\n{PLANT}\n"
    turn = run_turn(
        app,
        "go",
        script_calls(
            ("write_file", {"path": path, "content": planted}),
            ("write_file", {"path": "ok.txt", "content": "x"}),
        ),
        headless=True,
    )
    assert [c["status"] for c in turn.calls] == ["retry", "ok"], turn.output
    assert "git on the user's machine runs" in turn.output
    use_git_everywhere(workspace)
    assert owned(workspace) == []
