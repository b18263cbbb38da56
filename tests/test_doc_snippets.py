"""Every code example in the plugin author guide is a region of a tested file, verbatim."""

from __future__ import annotations

import pytest
from doc_snippets import ROOT, snippets, unmarked_code

GUIDE = ROOT / "docs" / "plugins.md"


def test_the_guide_has_snippets() -> None:
    assert len(snippets(GUIDE)) >= 15


@pytest.mark.parametrize("path,region,shown,source", snippets(GUIDE), ids=lambda v: str(v)[:40])
def test_snippet_matches_its_source(path: str, region: str | None, shown: str, source: str) -> None:
    assert shown == source, f"run `uv run python tests/doc_snippets.py` ({path}#{region} changed)"


def test_no_pasted_code() -> None:
    assert unmarked_code(GUIDE) == [], "python/toml blocks in docs/plugins.md need a snippet marker"
