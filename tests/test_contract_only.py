"""The core knows no plugin: ``co_core`` names no bundled tool, no bundled plugin, and holds
no list of parameter names standing for a role (what a tool's arguments are comes from
its declaration: ``register(..., roles=)``).

The code is read as code (docstrings and comments aside: they may give examples). A list
of parameter names is a literal collection (or a string split into words) holding two or
more of the words bundled tools name their arguments with, or that name a file or a text
(``PARAMETER_WORDS``), the role vocabulary itself aside (``target``, ``text``, ``content``,
``query``...: the contract, not a guess). Not counted as such lists: the language tables
(``co_core/agent/tools/lexicon.py``, ``co_core/steering/lexicon.py``: the words users
write, some of which are also argument names, "text", "message") and the policy's tables
of programs and their options (``co_core/policy/shell/``: git's own subcommands); a
tool's or a plugin's name is refused everywhere.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from co_core.agent.assembly.build import load_tools
from co_core.kernel.tools import params_of
from co_core.testing import make_app

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "co_core"
BUNDLED = ("co_shell", "co_obsidian", "co_google", "co_slack")
LANGUAGE_TABLES = {CORE / "agent/tools/lexicon.py", CORE / "steering/lexicon.py"}
PROGRAM_TABLES = CORE / "policy" / "shell"
# Words argument names are made of, when a list of them would stand for a role (the old
# steering's "content text body message code cmd command search replace", "path file
# filename file_path filepath"), and what bundled tools call the things they act on.
PARAMETER_WORDS = frozenset(
    "content body message code cmd command search replace path file filename file_path "
    "filepath title channel subject key value folder tag label query".split()
)


@pytest.fixture(scope="module")
def bundled() -> tuple[set[str], set[str], set[str]]:
    """The bundled plugins' tool names, their entry-point names, and their tools'
    parameter names."""
    mp = pytest.MonkeyPatch()
    mp.delenv("CO_LOAD_PLUGINS", raising=False)
    try:
        app = make_app()
        specs = [
            s for s in app.host.tools() if s.plugin in ("shell", "obsidian", "google", "slack")
        ]
        tools = load_tools(app.host, lambda message: None)
    finally:
        mp.undo()
    names = {s.name for s in specs}
    params = {
        p.name
        for t in tools
        if t.name in names
        for p in params_of(t.tool_def.parameters_json_schema)
    }
    assert len(names) >= 29 and {"path", "content", "cmd", "query"} <= params
    return names, {s.plugin for s in specs}, params


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _strings(tree: ast.AST) -> Iterator[ast.Constant]:
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node


def _names(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.lineno, node.name
        elif isinstance(node, ast.alias):
            yield getattr(node, "lineno", 0), node.name


def _collections(tree: ast.AST) -> Iterator[tuple[int, list[str]]]:
    """The words of every literal collection of strings, and of every string split into
    words (``"a b c".split()``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.List | ast.Set | ast.Tuple):
            items = [
                e.value
                for e in node.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            if len(items) >= 2:
                yield node.lineno, items
        elif isinstance(node, ast.Dict):
            keys = [
                k.value
                for k in node.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            ]
            if len(keys) >= 2:
                yield node.lineno, keys
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "split"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
        ):
            yield node.lineno, node.func.value.value.split()


def _modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def test_co_core_names_no_bundled_tool_nor_plugin(
    bundled: tuple[set[str], set[str], set[str]],
) -> None:
    tools, plugins, _params = bundled
    found = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT)
        for node in _strings(tree):
            words = set(node.value.replace(":", " ").replace(".", " ").split())
            hits = (words & tools) | {p for p in BUNDLED if p in node.value}
            if hits:
                found.append(f"{where}:{node.lineno}: {sorted(hits)}")
        for line, name in _names(tree):
            if name in tools or name.split(".")[0] in BUNDLED:
                found.append(f"{where}:{line}: {name}")
    assert found == []


def _forbidden(params: set[str]) -> set[str]:
    from co_core.kernel.tools import DOES, ROLES

    assert (
        PARAMETER_WORDS
        - {"file", "filename", "file_path", "filepath", "command", "message", "title"}
        <= params
    )
    return PARAMETER_WORDS - set(ROLES) - set(DOES)


def test_co_core_holds_no_list_of_parameter_names(
    bundled: tuple[set[str], set[str], set[str]],
) -> None:
    _tools, _plugins, found_params = bundled
    params = _forbidden(found_params)
    found = []
    for path in _modules():
        if path in LANGUAGE_TABLES or PROGRAM_TABLES in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, words in _collections(tree):
            hits = sorted(set(words) & params)
            if len(hits) >= 2:
                found.append(f"{path.relative_to(ROOT)}:{line}: {hits}")
    assert found == []


def test_the_check_finds_what_it_looks_for(
    tmp_path: Path, bundled: tuple[set[str], set[str], set[str]]
) -> None:
    """The two checks above, on code that breaks them (a test that cannot fail is none)."""
    params = _forbidden(bundled[2])
    code = (
        'PAYLOAD = frozenset({"content", "body", "cmd"})\n'
        'PATHS = "path file filename".split()\n'
        "def f():\n"
        '    """read_file is fine here."""\n'
        '    return "read_file"\n'
    )
    tree = ast.parse(code)
    lists = [sorted(set(w) & params) for _line, w in _collections(tree)]
    assert sorted(h for h in lists if len(h) >= 2) == [
        ["body", "cmd"],
        ["file", "filename", "path"],
    ]
    strings = [n.value for n in _strings(tree)]
    assert "read_file" in strings and "read_file is fine here." not in strings
