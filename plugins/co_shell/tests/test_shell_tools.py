"""The workspace tools through a real pydantic-ai agent (scripted model) and real sandboxes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from co_shell import file_tools, pathsafe, shell_tools
from pydantic_ai import ModelRetry
from shell_testlib import chown_tree, make_workspace, require_backend, run_agent

from co_core.testing import make_deps


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = make_workspace()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def outside() -> Iterator[Path]:
    folder = make_workspace()
    (folder / "secret.txt").write_text("outside-secret")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def deps(co_dirs: Path, workspace: Path) -> Iterator[Any]:
    require_backend("bubblewrap")
    deps = make_deps({"shell": {"sandbox": "bubblewrap", "timeout": 5}}, workspace=workspace)
    yield deps
    deps.close()


def ctx(deps: Any) -> Any:
    """What a tool reads from pydantic-ai's RunContext: only ``deps``."""
    return SimpleNamespace(deps=deps)


# -- path attacks -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["../secret.txt", "/etc/passwd", "../../../../etc/passwd", "a/../../x"]
)
def test_traversal_is_refused(deps: Any, path: str) -> None:
    with pytest.raises(ModelRetry, match="outside the workspace"):
        file_tools.read_file(ctx(deps), path)
    with pytest.raises(ModelRetry, match="outside the workspace"):
        file_tools.write_file(ctx(deps), path, "x")


def test_symlinks_leaving_the_workspace_are_refused(
    deps: Any, workspace: Path, outside: Path
) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    (workspace / "linkdir").symlink_to(outside, target_is_directory=True)
    for path in ("link.txt", "linkdir/secret.txt"):
        with pytest.raises(ModelRetry, match="outside the workspace"):
            file_tools.read_file(ctx(deps), path)
        with pytest.raises(ModelRetry, match="outside the workspace"):
            file_tools.write_file(ctx(deps), path, "overwritten")
    with pytest.raises(ModelRetry, match="outside the workspace"):
        file_tools.list_files(ctx(deps), "linkdir")
    with pytest.raises(ModelRetry, match="outside the workspace"):
        file_tools.write_file(ctx(deps), "linkdir/new.txt", "x")
    assert (outside / "secret.txt").read_text() == "outside-secret"
    assert not (outside / "new.txt").exists()


def test_symlink_inside_the_workspace_is_fine(deps: Any, workspace: Path) -> None:
    (workspace / "real.txt").write_text("hello")
    (workspace / "alias.txt").symlink_to("real.txt")
    assert file_tools.read_file(ctx(deps), "alias.txt") == "hello"


@pytest.mark.parametrize(
    "path",
    [".git/config", ".co/settings.json", ".git/hooks/pre-commit", ".", "vendor/lib/.git/config"],
)
def test_protected_places_are_not_writable(deps: Any, workspace: Path, path: str) -> None:
    (workspace / ".git").mkdir()
    with pytest.raises(ModelRetry):
        file_tools.write_file(ctx(deps), path, "evil")
    assert not (workspace / ".git" / "config").exists()
    assert not (workspace / ".co").exists()
    assert not (workspace / "vendor").exists()


def test_a_folder_swapped_for_a_symlink_after_the_check_is_refused(
    workspace: Path, outside: Path
) -> None:
    (workspace / "sub").mkdir()
    real = pathsafe.resolve(workspace, "sub/file.txt", write=True)
    # the attacker swaps the folder between the check and the write
    (workspace / "sub").rmdir()
    (workspace / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(pathsafe.PathRefused, match="symlink"):
        pathsafe.write_bytes(workspace, real, b"escaped")
    with pytest.raises(pathsafe.PathRefused, match="symlink"):
        pathsafe.read_bytes(
            workspace, pathsafe.resolve(workspace, "x").parent / "sub" / "secret.txt"
        )
    assert not (outside / "file.txt").exists()


def test_a_file_swapped_for_a_symlink_is_replaced_not_written_through(
    workspace: Path, outside: Path
) -> None:
    (workspace / "f.txt").write_text("v0")
    real = pathsafe.resolve(workspace, "f.txt", write=True)
    (workspace / "f.txt").unlink()
    (workspace / "f.txt").symlink_to(outside / "secret.txt")
    pathsafe.write_bytes(workspace, real, b"v1")
    assert (outside / "secret.txt").read_text() == "outside-secret"
    assert (workspace / "f.txt").read_text() == "v1" and not (workspace / "f.txt").is_symlink()
    (workspace / "g.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(pathsafe.PathRefused):
        pathsafe.read_bytes(workspace, workspace.resolve() / "g.txt")


def test_sandbox_paths_are_accepted(deps: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text("via /workspace")
    assert file_tools.read_file(ctx(deps), "/workspace/a.txt") == "via /workspace"


# -- the file tools ---------------------------------------------------------------------------


def test_list_files_pages_sizes_and_skips_git(deps: Any, workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("ref")
    (workspace / "many").mkdir()
    for i in range(250):
        (workspace / "many" / f"f{i:03}.txt").write_text("x" * i)
    first = file_tools.list_files(ctx(deps), "many")
    assert first.count == 250 and first.has_more and first.next_page == 2
    assert "f000.txt  (0 B)" in first.display and "more entries" in first.display
    second = file_tools.list_files(ctx(deps), "many", page=2)
    assert not second.has_more and "f249.txt" in second.display
    top = file_tools.list_files(ctx(deps), ".", recursive=True)
    assert "many/" in top.display and ".git" not in top.display
    (workspace / "empty").mkdir()
    assert file_tools.list_files(ctx(deps), "empty").count == 0


def test_read_file_ranges_and_cap(deps: Any, workspace: Path) -> None:
    (workspace / "lines.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    assert file_tools.read_file(ctx(deps), "lines.txt", 3, 4) == "line 3\nline 4\n"
    (workspace / "big.txt").write_text("y" * 100 + "\n" * 1 + ("z" * 1000 + "\n") * 200)
    text = file_tools.read_file(ctx(deps), "big.txt")
    assert "cut at line" in text and "start_line=" in text
    with pytest.raises(ModelRetry, match="no file"):
        file_tools.read_file(ctx(deps), "missing.txt")
    (workspace / "min.js").write_text("x" * 200_000 + "\nsecond\n")
    text = file_tools.read_file(ctx(deps), "min.js")
    assert "line 1:" in text and "more characters cut" in text and "start_line=2" in text
    assert len(text) < 70_000


def test_write_creates_parents_and_edit_is_exact(deps: Any, workspace: Path) -> None:
    file_tools.write_file(ctx(deps), "src/pkg/mod.py", "a = 1\nb = 1\n")
    assert (workspace / "src/pkg/mod.py").read_text() == "a = 1\nb = 1\n"
    with pytest.raises(ModelRetry, match="not found"):
        file_tools.edit_file(ctx(deps), "src/pkg/mod.py", "c = 1", "c = 2")
    with pytest.raises(ModelRetry, match="occurs 2 times"):
        file_tools.edit_file(ctx(deps), "src/pkg/mod.py", " = 1", " = 2")
    file_tools.edit_file(ctx(deps), "src/pkg/mod.py", "b = 1", "b = 2")
    assert (workspace / "src/pkg/mod.py").read_text() == "a = 1\nb = 2\n"


# -- exec tools through the agent ---------------------------------------------------------------


def test_failing_command_reaches_the_model_with_exit_code_and_output(deps: Any) -> None:
    seen = run_agent(
        deps,
        [("run_shell_command", {"cmd": "echo some-output; echo oops >&2; exit 3"})],
        [shell_tools.run_shell_command],
    )
    told = "\n".join(seen)
    assert "exited with code 3" in told and "some-output" in told and "oops" in told


def test_timeout_is_said_as_such(co_dirs: Path, workspace: Path) -> None:
    require_backend("bubblewrap")
    deps = make_deps({"shell": {"sandbox": "bubblewrap", "timeout": 1}}, workspace=workspace)
    seen = run_agent(
        deps, [("run_shell_command", {"cmd": "sleep 100"})], [shell_tools.run_shell_command]
    )
    assert any("timed out after 1 s" in s for s in seen)


def test_run_python_snippet_and_script(deps: Any, workspace: Path) -> None:
    (workspace / "tool.py").write_text("import sys\nprint('args', sys.argv[1:])\n")
    chown_tree(workspace)
    assert shell_tools.run_python(ctx(deps), code="print(6 * 7)") == "42"
    # the last line's value is shown, as in the Python shell (a copied "7919 * 104729")
    assert shell_tools.run_python(ctx(deps), code="7919 * 104729") == "829348951"
    assert shell_tools.run_python(ctx(deps), code="x = 2\nx ** 10") == "1024"
    assert shell_tools.run_python(ctx(deps), code="import sys; sys.argv", args=["a"]) == (
        "['-c', 'a']"
    )
    assert shell_tools.run_python(ctx(deps), code="x = 1") == "(no output)"
    assert shell_tools.run_python(ctx(deps), path="tool.py", args=["x"]) == "args ['x']"
    with pytest.raises(ModelRetry, match="outside the workspace"):
        shell_tools.run_python(ctx(deps), path="../../etc/passwd")
    with pytest.raises(ModelRetry, match="either code"):
        shell_tools.run_python(ctx(deps))
    with pytest.raises(ModelRetry, match="exited with code 1"):
        shell_tools.run_python(ctx(deps), code="raise SystemExit('bad input')")
    # an error reads as plain Python's would: the user's line, not Co's bootstrap
    (workspace / "fails.py").write_text("x = 1\nraise ValueError('no x')\n")
    chown_tree(workspace)
    for kind in ({"code": "x = 1\n[][0]"}, {"path": "fails.py"}):
        with pytest.raises(ModelRetry) as failed:
            shell_tools.run_python(ctx(deps), **kind)  # type: ignore[arg-type]
        said = str(failed.value)
        assert "Error" in said and "line 2, in <module>" in said
        assert "_co_run" not in said and "NameError" not in said


# -- undo across tools ----------------------------------------------------------------------------


def test_undo_reverts_write_edit_and_shell_changes(
    deps: Any, workspace: Path, outside: Path
) -> None:
    (workspace / "notes.txt").write_text("original\n")
    (workspace / "keep.txt").write_text("keep\n")
    chown_tree(workspace)
    deps.changes.next_turn()
    seen = run_agent(
        deps,
        [
            ("write_file", {"path": "new/created.txt", "content": "new\n"}),
            ("edit_file", {"path": "notes.txt", "search": "original", "replace": "edited"}),
            (
                "run_shell_command",
                {"cmd": "echo shell >> keep.txt; echo made > shell.txt; rm notes.txt"},
            ),
        ],
        [file_tools.write_file, file_tools.edit_file, shell_tools.run_shell_command],
    )
    assert "done" not in seen  # sanity: the model saw tool results
    assert (workspace / "keep.txt").read_text() == "keep\nshell\n"
    # an attacker plants a symlink where a restored file goes
    (workspace / "notes.txt").symlink_to(outside / "secret.txt")

    from co_core.testing import make_app, run_slash

    message = run_slash(make_app(), "/undo", deps)
    assert "Undid turn" in message
    assert (workspace / "notes.txt").read_text() == "original\n"
    assert not (workspace / "notes.txt").is_symlink()
    assert (outside / "secret.txt").read_text() == "outside-secret"
    assert (workspace / "keep.txt").read_text() == "keep\n"
    assert not (workspace / "shell.txt").exists()
    assert not (workspace / "new").exists()


def test_co_changes_and_co_undo_commands(deps: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text("before\n")
    deps.changes.next_turn()
    file_tools.edit_file(ctx(deps), "a.txt", "before", "after")
    co = [str(Path(sys.executable).parent / "co")]
    env = dict(os.environ, CO_LOAD_PLUGINS="")
    listed = subprocess.run([*co, "changes"], capture_output=True, text=True, env=env)
    assert listed.returncode == 0, listed.stderr
    assert (
        "-before" in listed.stdout
        and "+after" in listed.stdout
        and deps.session_id in listed.stdout
    )
    undone = subprocess.run([*co, "undo"], capture_output=True, text=True, env=env)
    assert undone.returncode == 0, undone.stderr
    assert (workspace / "a.txt").read_text() == "before\n"
    again = subprocess.run([*co, "undo", "99"], capture_output=True, text=True, env=env)
    assert again.returncode != 0 and "no changes recorded in turn 99" in again.stderr
    assert "Traceback" not in again.stderr


@pytest.mark.parametrize("backend", ["docker", "bubblewrap", "none"])
def test_run_python_and_shell_in_each_backend(co_dirs: Path, workspace: Path, backend: str) -> None:
    image = require_backend(backend)
    shell = {"sandbox": backend, "keep_container": False, **({"image": image} if image else {})}
    deps = make_deps({"shell": shell}, workspace=workspace)
    try:
        seen = run_agent(
            deps,
            [
                ("run_python", {"code": "open('out.txt', 'w').write('from python')"}),
                ("run_shell_command", {"cmd": "cat out.txt; echo; ls"}),
            ],
            [shell_tools.run_python, shell_tools.run_shell_command],
        )
        assert any("from python" in s and "out.txt" in s for s in seen)
        assert (workspace / "out.txt").read_text() == "from python"
        assert "Undid turn" in deps.changes.undo().text()
        assert not (workspace / "out.txt").exists()
    finally:
        deps.close()


def test_files_too_big_to_undo_are_not_overwritten(deps: Any, workspace: Path) -> None:
    from co_core import MAX_KEPT_BYTES

    big = workspace / "huge.log"
    with open(big, "wb") as handle:
        handle.truncate(MAX_KEPT_BYTES + 1)
    with pytest.raises(ModelRetry, match="too big to keep an undo copy"):
        file_tools.write_file(ctx(deps), "huge.log", "small")
    assert big.stat().st_size == MAX_KEPT_BYTES + 1
