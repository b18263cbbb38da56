"""``co plugin guide`` and ``co plugin example``: the plugin author guide and its example, as shipped.

The wheel carries docs/plugins.md and examples/co-todo under ``co_core/cli/guide/``
(pyproject.toml, ``force-include``); a checkout of Co's repository reads them where they
live, so both commands work from a clone as well as from an installed package.
"""

from __future__ import annotations

import re
import shutil
from importlib.resources import files
from pathlib import Path

from co_core.kernel.errors import CoError

_REPO = Path(__file__).resolve().parents[2]
_SNIPPET = re.compile(r"^<!-- snippet: .* -->\n", re.M)
_LINK = re.compile(r"\]\((?!https?:|mailto:|#)([^)\s]+)\)")
_SKIP = shutil.ignore_patterns(  # what running the example's tests or tools leaves behind
    "__pycache__", "*.pyc", ".pytest_cache", ".mypy_cache", ".ruff_cache", "*.egg-info", ".venv"
)


def _shipped(name: str, in_repo: Path) -> Path | None:
    """A file or folder shipped in ``co_core/cli/guide/``, else its place in a checkout."""
    packaged = files("co_core.cli") / "guide" / name
    if packaged.is_file() or packaged.is_dir():
        return Path(str(packaged))  # wheels install as plain files
    return in_repo if in_repo.exists() else None


def guide_text(docs_url: str) -> str:
    """The guide as Markdown, its links to Co's other docs pointing at ``docs_url``."""
    path = _shipped("plugins.md", _REPO / "docs" / "plugins.md")
    if path is None:
        raise CoError(f"the plugin guide is not installed with this co-core: read it at {docs_url}")
    text = _SNIPPET.sub("", path.read_text(encoding="utf-8"))  # markers are for Co's tests
    base = docs_url.rsplit("/", 1)[0] + "/"
    return _LINK.sub(lambda m: f"]({base}{m.group(1)})", text)


def write_example(parent: Path) -> Path:
    """Copy co-todo, the guide's complete example, to ``parent/co-todo``."""
    source = _shipped("co-todo", _REPO / "examples" / "co-todo")
    if source is None:
        raise CoError("the plugin guide's example is not installed with this co-core")
    if not parent.is_dir():
        raise CoError(f"{parent} is not a folder")
    target = parent / "co-todo"
    if target.exists():
        raise CoError(f"{target} already exists: pick another folder (nothing was written)")
    shutil.copytree(source, target, ignore=_SKIP)
    return target
