"""A note Co itself creates or appends to is searchable at once, however far the index is.

On a large vault (6,280 generated notes, bench/make_vault.py) the index is still being
built, or checked for changes behind a search, when the next search comes. The builder
is held mid-build by a note it cannot read yet: a named pipe, which blocks a reader
until someone writes to it, as a cloud-sync placeholder blocks until it is downloaded.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from co_obsidian.keys import VAULT
from co_obsidian.tools import append_to_note, create_note, search_notes

ROOT = Path(__file__).resolve().parents[3]
NOTES = 6280


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated vault, once per module."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import make_vault
    finally:
        sys.path.pop(0)
    folder = tmp_path_factory.mktemp("large") / "vault"
    make_vault.main([str(folder), "--notes", str(NOTES), "--avg-bytes", "1500"])
    return folder


class Held:
    """A named pipe in the vault: the builder blocks reading it until ``release``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path)

    def release(self) -> None:
        with open(self.path, "w", encoding="utf-8") as pipe:  # the builder reads this
            pipe.write("held note\n")

    def settle(self) -> None:
        """The placeholder, downloaded: a plain note from now on."""
        self.path.unlink()
        self.path.write_text("held note\n", encoding="utf-8")


@pytest.fixture
def vault(large: Path, tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "vault"
    shutil.copytree(large, root)
    yield root


def _search(ctx, words: str) -> list[str]:
    return search_notes(ctx, words).data.get("paths", [])


def _held_build(ctx, root: Path) -> tuple[object, Held]:
    """The first search starts the builder; it then blocks on the pipe."""
    held = Held(root / "zz held.md")
    _search(ctx, "budget")
    index = ctx.deps.resource(VAULT).index()
    assert index.building()
    return index, held


def _finish(index, held: Held) -> None:
    releaser = threading.Thread(target=held.release)
    releaser.start()
    index._builder.join(timeout=120)
    releaser.join(timeout=10)
    held.settle()
    assert not index.building()


@pytest.mark.slow
def test_own_writes_are_found_while_a_completed_index_is_checked(vault, make_ctx, tmp_path):
    """An index an earlier Co completed answers at once while the builder checks the
    vault behind it: that check must not hide what Co writes meanwhile."""
    first = make_ctx(vault)
    first.deps.resource(VAULT).index().refresh()  # an earlier Co completed the index
    for path in sorted(vault.rglob("*.md"))[:100]:  # then a sync changed a few notes
        path.write_text(path.read_text(encoding="utf-8") + "\nsynced\n", encoding="utf-8")

    ctx = make_ctx(vault)
    index, held = _held_build(ctx, vault)
    try:
        create_note(ctx, "Fresh/Zebrafinch plan", "The zebrafinchword is here. #fresh")
        assert index.building() and index.answered_by == "index"
        assert _search(ctx, "zebrafinchword") == ["Fresh/Zebrafinch plan.md"]
        assert index.answered_by == "index" and index.building()

        append_to_note(ctx, "Fresh/Zebrafinch plan", "Later the quokkaword came.")
        assert _search(ctx, "quokkaword") == ["Fresh/Zebrafinch plan.md"]
        assert _search(ctx, "zebrafinchword") == ["Fresh/Zebrafinch plan.md"]
        assert index.building()
    finally:
        _finish(index, held)
    # the builder, done, did not undo it
    assert _search(ctx, "quokkaword") == ["Fresh/Zebrafinch plan.md"]
    assert _search(ctx, "held") != []  # and the held note is indexed too


@pytest.mark.slow
def test_own_writes_are_found_while_the_index_is_first_built(vault, make_ctx):
    ctx = make_ctx(vault)
    index, held = _held_build(ctx, vault)
    try:
        assert not index._ready  # built from nothing: ripgrep answers meanwhile
        create_note(ctx, "Fresh/Heron log", "A heronword sighting.")
        assert _search(ctx, "heronword") == ["Fresh/Heron log.md"]
        append_to_note(ctx, "Fresh/Heron log", "Then an ibisword.")
        assert _search(ctx, "ibisword") == ["Fresh/Heron log.md"]
    finally:
        _finish(index, held)
    assert _search(ctx, "ibisword") == ["Fresh/Heron log.md"]
    assert index.answered_by == "index"
