"""The project a session belongs to is never a folder someone else could have set up.

An untrusted ``.co/`` in a parent folder makes that folder "the project": its sessions
share grants ("always" answers). So it counts only when the folder and its ``.co`` are
the user's own and nobody else can write them: a world-writable ``/tmp/.co`` must not
merge every project under ``/tmp`` into one.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from policy_support import call, engine_for

from co_core.kernel import trust

OTHER_UID = 1000


def _siblings(parent: Path) -> tuple[Path, Path]:
    first, second = parent / "alpha", parent / "beta"
    first.mkdir()
    second.mkdir()
    return first, second


def _shares_grants(first: Path, second: Path) -> bool:
    """Does an "always" given in ``first`` answer the same call in ``second``?"""
    engine = engine_for(first)
    decided = engine.decide(call(engine, "run_shell", cmd="make deploy"))
    engine.record_answer(decided, True, scope="project")
    other = engine_for(second)
    return other.decide(call(other, "run_shell", cmd="make deploy")).allowed


@pytest.mark.parametrize("mode", [0o1777, 0o777, 0o757])
def test_a_co_folder_in_a_folder_others_can_write_is_not_a_project(
    co_dirs: Path, tmp_path: Path, mode: int
) -> None:
    shared = tmp_path / "shared-tmp"
    (shared / ".co").mkdir(parents=True)
    shared.chmod(mode)
    first, second = _siblings(shared)
    try:
        assert trust.project_root(first) is None
        assert engine_for(first).grant_scope == first.resolve()
        assert not _shares_grants(first, second)
    finally:
        shared.chmod(0o755)


def test_a_co_folder_others_can_write_is_not_a_project(co_dirs: Path, tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    (parent / ".co").mkdir(parents=True)
    (parent / ".co").chmod(0o777)
    first, second = _siblings(parent)
    assert trust.project_root(first) is None
    assert not _shares_grants(first, second)


def test_a_linked_co_folder_is_not_a_project(co_dirs: Path, tmp_path: Path) -> None:
    parent = tmp_path / "parent"
    parent.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (parent / ".co").symlink_to(tmp_path / "elsewhere")
    first, _ = _siblings(parent)
    assert trust.project_root(first) is None


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a folder to another user")
def test_a_co_folder_of_another_user_is_not_a_project(co_dirs: Path, tmp_path: Path) -> None:
    parent = tmp_path / "theirs"
    (parent / ".co").mkdir(parents=True)
    os.chown(parent, OTHER_UID, OTHER_UID)
    first, second = _siblings(parent)
    assert trust.project_root(first) is None
    assert not _shares_grants(first, second)
    os.chown(parent / ".co", OTHER_UID, OTHER_UID)
    os.chown(parent, os.getuid(), os.getgid())
    assert trust.project_root(first) is None  # its .co is someone else's


def test_your_own_project_folder_is_still_the_project(co_dirs: Path, tmp_path: Path) -> None:
    parent = tmp_path / "mine"
    (parent / ".co").mkdir(parents=True)
    parent.chmod(0o755)
    first, second = _siblings(parent)
    assert trust.project_root(first) == parent.resolve()
    assert _shares_grants(first, second)  # one project, as before


def test_a_folder_you_trusted_is_the_project_however_it_is_shared(
    co_dirs: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "team"
    shared.mkdir()
    shared.chmod(0o777)
    try:
        trust.trust(shared)
        first, _ = _siblings(shared)
        assert trust.project_root(first) == shared.resolve()
    finally:
        shared.chmod(0o755)
