"""search_files on real workspaces: which files hold the words, the lines, what is never
opened (denied files, binaries, symlinks out), and the files holding some of the words."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from co_shell.file_search import search_files
from pydantic_ai import ModelRetry
from shell_testlib import make_workspace

from co_core.testing import make_deps


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    folder = make_workspace()
    (folder / "report-q3.txt").write_text(
        "Quarterly report.\nOpen invoice INV-40411 is still unpaid.\n"
    )
    (folder / "notes.txt").write_text("Team meeting in room B-204.\nInvoices go to Alice.\n")
    (folder / "src").mkdir()
    (folder / "src" / "app.py").write_text("def pay(invoice):\n    return invoice.total\n")
    (folder / "secrets").mkdir()
    (folder / "secrets" / "key.txt").write_text("unpaid invoice KEY-123\n")
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text("unpaid invoice in git\n")
    (folder / "bin.dat").write_bytes(b"\0unpaid invoice")
    outside = tmp_path / "outside.txt"
    outside.write_text("unpaid invoice outside\n")
    (folder / "link.txt").symlink_to(outside)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def deps(co_dirs: Path, workspace: Path) -> Iterator[Any]:
    rules = [{"match": "fs:read:secrets/**", "effect": "deny", "reason": "private"}]
    deps = make_deps({"policy": {"rules": rules}}, workspace=workspace)
    yield deps
    deps.close()


def search(deps: Any, query: str, **more: Any) -> Any:
    return search_files(SimpleNamespace(deps=deps), query, **more)


def test_files_holding_every_word_with_their_lines(deps: Any) -> None:
    result = search(deps, "unpaid invoice")
    assert result.data["paths"] == ["report-q3.txt"] and result.count == 1
    assert "report-q3.txt\n  2: Open invoice INV-40411 is still unpaid." in result.display


@pytest.mark.parametrize(
    ("query", "paths"),
    [
        ("INVOICES", ["notes.txt", "report-q3.txt", "src/app.py"]),  # any case; singular too
        ("Invoices Alice", ["notes.txt"]),
        ("invoice", ["notes.txt", "report-q3.txt", "src/app.py"]),  # a word's start
        ('"room B-204"', ["notes.txt"]),  # a quoted phrase
        ("report unpaid", ["report-q3.txt"]),  # a word in the path counts
        ("voice", []),  # inside a word: no
    ],
)
def test_words_match_at_the_start_of_words(deps: Any, query: str, paths: list[str]) -> None:
    assert sorted(search(deps, query).data.get("paths", [])) == paths


def test_denied_binary_hidden_and_linked_out_files_are_never_opened(deps: Any) -> None:
    shown = search(deps, "unpaid").display
    for never in ("KEY-123", "secrets/", ".git", "bin.dat", "outside", "link.txt"):
        assert never not in shown


def test_no_file_with_every_word_lists_those_with_the_rarest_ones_apart(deps: Any) -> None:
    result = search(deps, "about an unpaid invoice and its number")
    assert result.count == 0 and result.data["paths"] == []
    assert result.display.startswith("No file holds 'about an unpaid invoice and its number'.")
    assert result.data["near"][0] == "report-q3.txt"
    assert search(deps, "zebra giraffe").display == "No file holds 'zebra giraffe'."


def test_bad_arguments_say_what_to_give(deps: Any) -> None:
    with pytest.raises(ModelRetry, match="query is empty"):
        search(deps, '  "" ')
    with pytest.raises(ModelRetry, match="not a folder"):
        search(deps, "x", path="notes.txt")
    with pytest.raises(ModelRetry, match="outside the workspace"):
        search(deps, "x", path="../")
    with pytest.raises(ModelRetry, match="page starts at 1"):
        search(deps, "x", page=0)


def test_pages(deps: Any, workspace: Path) -> None:
    for i in range(25):
        (workspace / f"n{i:02d}.txt").write_text(f"heron {i}\n")
    first, second = search(deps, "heron"), search(deps, "heron", page=2)
    assert (first.count, first.has_more, len(first.data["paths"])) == (25, True, 20)
    assert "More: page=2" in first.display
    assert second.data["paths"] == [f"n{i:02d}.txt" for i in range(20, 25)]
    assert not set(first.data["paths"]) & set(second.data["paths"])


def test_a_missing_file_is_refused_before_the_decision_unless_it_may_not_be_read(
    deps: Any, workspace: Path
) -> None:
    from co_shell.targets import reading

    from co_core import CallRefused

    with pytest.raises(CallRefused, match="no file 'nope.txt'"):
        reading({"path": "nope.txt"}, deps)
    assert reading({"path": "notes.txt"}, deps).args["path"] == "notes.txt"
    # a denied path: the decision denies it whether or not it exists (nothing to probe)
    assert reading({"path": "secrets/missing.txt"}, deps).args["path"] == "secrets/missing.txt"
    assert os.path.exists(workspace / "secrets" / "key.txt")


# -- bounds: words, bytes read, time ---------------------------------------------------------


def test_a_query_of_thousands_of_words_is_refused_saying_the_limit(deps: Any) -> None:
    """2,000 words over one 400 KB file once took 35 s: now refused at once."""
    from co_shell import file_search

    words = " ".join(f"word{i}" for i in range(2000))
    with pytest.raises(
        ModelRetry, match=f"2,000 words; search_files takes at most {file_search.MAX_TERMS}"
    ):
        search(deps, words)
    assert search(deps, " ".join(["invoice"] * 40 + ["unpaid"])).count == 1  # repeats are one


@pytest.mark.parametrize(
    ("limit", "value", "said"),
    [
        ("MAX_SECONDS", 0.0, r"stopped after 0 s, 0 files read"),
        ("MAX_BYTES", 10, r"stopped after \d+ bytes in \d+ files"),
        ("MAX_FILES", 1, r"the first 1 files read"),
    ],
)
def test_a_search_that_stops_early_says_so(
    deps: Any, monkeypatch: pytest.MonkeyPatch, limit: str, value: float, said: str
) -> None:
    from co_shell import file_search

    monkeypatch.setattr(file_search, limit, value)
    result = search(deps, "unpaid invoice")
    assert re.search(said, result.display), result.display
    assert "the rest was not searched: give path= to narrow it" in result.display
    if limit == "MAX_SECONDS":
        assert result.count == 0 and result.display.startswith("No file holds")


def test_a_big_file_is_searched_whole_within_the_budget(deps: Any, workspace: Path) -> None:
    """Structural: a 400 KB file and 32 words are searched to the end; only the first
    lines are collected."""
    from co_shell import file_search

    body = "".join(f"line {i} about invoices and other things\n" for i in range(10_000))
    (workspace / "big.txt").write_text(body + "the unpaid needle\n")
    words = ["needle", "unpaid", "invoice"] + [f"about{i}"[:5] for i in range(29)]
    result = search(deps, " ".join(words[: file_search.MAX_TERMS]))
    assert "big.txt" in result.display
    assert "not searched" not in result.display
