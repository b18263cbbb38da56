"""Every test in this repository runs with private Co directories: none touches real settings."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def _changed_files() -> set[str]:
    """What ``git status`` lists in this checkout (empty outside a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain"], cwd=HERE, capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return set(out.splitlines())


# What programs the tests start keep in the temporary folder by design, removed with it: a
# pytest's own temporary folders (kept for its last three runs), and the empty file uv
# locks an environment it changes with (never removed, astral-sh/uv's design); and what
# third-party code names with tempfile's default prefix (Co and its tests name every
# temporary file and folder they make: co-ws-, co-logs-, co-changes-, …)
OTHERS = ("pytest-of-*", "uv-*.lock", "tmp*")


@pytest.fixture(scope="session", autouse=True)
def _temporary_files_cleaned_up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every test cleans up what it makes in the temporary folder (folders of workspaces, a
    file holding a test secret, `co logs`' metadata were left in /tmp for good).

    The session gets a temporary folder of its own (``TMPDIR``, which ``tempfile`` and every
    `co` the tests start use), so what other programs put in /tmp meanwhile is not counted;
    it may be entered by the sandbox's user (commands run as uid 1000 under root). At the
    end it must be empty but for what other programs keep there by design (``OTHERS``): what
    is left is named, then removed, the folder with it."""
    import fnmatch
    import shutil
    import tempfile

    tmp_path_factory.getbasetemp()  # pytest's own (tmp_path), where it is: cleaned by pytest
    root = Path(tempfile.mkdtemp(prefix="co-tests-", dir=tempfile.gettempdir()))
    root.chmod(0o755)
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(root)
    tempfile.tempdir = None  # read TMPDIR again
    try:
        yield
    finally:
        left = sorted(
            p.name for p in root.iterdir() if not any(fnmatch.fnmatch(p.name, o) for o in OTHERS)
        )
        if before is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before
        tempfile.tempdir = None
        subprocess.run(["chmod", "-R", "u+rwx", str(root)], capture_output=True, check=False)
        shutil.rmtree(root, ignore_errors=True)
        assert not left, f"tests left in the temporary folder: {left}"


@pytest.fixture(scope="session", autouse=True)
def _checkout_left_as_it_was() -> Iterator[None]:
    """No test writes into the checkout (notes a scripted turn wrote once landed in git)."""
    before = _changed_files()
    yield
    added = _changed_files() - before
    assert not added, f"tests wrote into the checkout: {sorted(added)}"


@pytest.fixture(autouse=True)
def _private_co_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path_factory.mktemp("co-home")
    for kind in ("config", "data", "cache"):
        folder = Path(base, kind)
        folder.mkdir()
        monkeypatch.setenv(f"CO_{kind.upper()}_DIR", str(folder))
    monkeypatch.delenv("CO_LOAD_PLUGINS", raising=False)
    # pexpect's pty never answers prompt_toolkit's cursor-position request; without this,
    # prompt_toolkit prints a warning 2 s into every `co chat`, in cooked mode, and a Ctrl+D
    # a test sends at that moment is eaten by the tty (a real terminal answers the request).
    monkeypatch.setenv("PROMPT_TOOLKIT_NO_CPR", "1")
