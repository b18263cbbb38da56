"""Code in docs/*.md comes from tested files, never pasted: ``<!-- snippet: PATH#REGION -->``.

The fenced block right after a marker must equal the region of PATH between
``# docs: REGION`` and ``# /docs`` (or the whole file without ``#REGION``). A region of a
Python file is shown with the imports it needs, taken from the top of its file (only the
names it uses), so that every block runs as copied; tests/test_doc_snippets.py runs them.
``python tests/doc_snippets.py`` rewrites the blocks from the sources; the test checks them.
"""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(
    r"^<!-- snippet: (?P<path>[^#\s]+)(?:#(?P<region>[\w-]+))? -->\n"
    r"```(?P<lang>\w*)\n(?P<body>.*?)^```$",
    re.S | re.M,
)
WIDTH = 100  # ruff's line length


@dataclass(frozen=True)
class Snippet:
    path: str
    region: str | None
    lang: str
    shown: str  # the block in the doc
    source: str  # what it must be: the region of the file, with its imports

    @property
    def is_test(self) -> bool:
        return Path(self.path).name.startswith("test_") and (self.region or "").startswith("test")


def region(path: str, name: str | None) -> str:
    text = (ROOT / path).read_text(encoding="utf-8")
    if name is None:
        return text.strip("\n") + "\n"
    match = re.search(rf"^[ \t]*# docs: {re.escape(name)}\n(.*?)^[ \t]*# /docs$", text, re.S | re.M)
    if match is None:
        raise LookupError(f"{path} has no '# docs: {name}' ... '# /docs' region")
    body = textwrap.dedent(match.group(1)).strip("\n") + "\n"
    if not path.endswith(".py"):
        return body
    imports = preamble(text, body)
    if not imports:
        return body
    first = body.lstrip().split("\n", 1)[0]
    gap = "\n\n\n" if first.startswith(("def ", "async def ", "class ", "@")) else "\n\n"
    return imports + gap + body


def _bound(alias: ast.alias, module_import: bool) -> str:
    if alias.asname:
        return alias.asname
    return alias.name.split(".")[0] if module_import else alias.name


def _used(body: str) -> tuple[set[str], set[str]]:
    """Names a region reads, and names it imports itself at its top level."""
    tree = ast.parse(body)
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    own = {  # imported at the region's top: imports inside its functions do not count
        _bound(alias, isinstance(node, ast.Import))
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    return used, own


def _render(node: ast.Import | ast.ImportFrom, keep: list[ast.alias], indent: str = "") -> str:
    names = [f"{a.name} as {a.asname}" if a.asname else a.name for a in keep]
    if isinstance(node, ast.Import):
        return "\n".join(f"{indent}import {name}" for name in names)
    head = f"{indent}from {'.' * node.level}{node.module or ''} import "
    line = head + ", ".join(names)
    if len(line) <= WIDTH:
        return line
    inner = "".join(f"{indent}    {name},\n" for name in names)
    return f"{head}(\n{inner}{indent})"


def preamble(source: str, body: str) -> str:
    """The top-of-file imports of ``source`` that ``body`` (a region of it) uses, grouped as
    in the file; names only imported for type checkers come under ``if TYPE_CHECKING:``."""
    used, own = _used(body)
    wanted = used - own
    lines = source.splitlines()
    tree = ast.parse(source)

    def kept(nodes: list[ast.stmt], indent: str = "") -> list[str]:
        out: list[str] = []
        previous: int | None = None
        for node in nodes:
            if not isinstance(node, ast.Import | ast.ImportFrom) or (
                isinstance(node, ast.ImportFrom) and node.module == "__future__"
            ):
                continue
            keep = [a for a in node.names if _bound(a, isinstance(node, ast.Import)) in wanted]
            if not keep:
                continue
            if previous is not None and _blank_between(lines, previous, node.lineno):
                out.append("")  # the file's grouping: standard library, others, own
            out.append(_render(node, keep, indent))
            previous = node.end_lineno or node.lineno
        return out

    checking: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            checking = kept(node.body, "    ")
    if checking:
        wanted.add("TYPE_CHECKING")
    parts = kept(tree.body)
    if checking:
        parts += ["", "if TYPE_CHECKING:", *checking]
        # those names are only in annotations, which must then not be evaluated
        if any(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in tree.body):
            parts = ["from __future__ import annotations", "", *parts]
    return "\n".join(parts)


def _blank_between(lines: list[str], after: int, before: int) -> bool:
    """Is there an empty line between line ``after`` and line ``before`` (1-based)?"""
    return any(not line.strip() for line in lines[after : before - 1])


def snippets(doc: Path) -> list[Snippet]:
    """Every marked block of ``doc``, with what it must be."""
    text = doc.read_text(encoding="utf-8")
    return [
        Snippet(m["path"], m["region"], m["lang"], m["body"], region(m["path"], m["region"]))
        for m in MARKER.finditer(text)
    ]


def unmarked_code(doc: Path, langs: tuple[str, ...] = ("python", "toml")) -> list[int]:
    """Line numbers of python/toml blocks without a snippet marker (pasted code)."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    found = []
    inside = False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            if not inside and line[3:].strip() in langs:
                previous = lines[number - 2] if number > 1 else ""
                if not previous.startswith("<!-- snippet: "):
                    found.append(number)
            inside = not inside
    return found


def sync(doc: Path) -> bool:
    text = doc.read_text(encoding="utf-8")

    def fill(m: re.Match[str]) -> str:
        head = m.group(0).split("\n", 1)[0]
        return f"{head}\n```{m['lang']}\n{region(m['path'], m['region'])}```"

    new = MARKER.sub(fill, text)
    if new != text:
        doc.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    for name in sys.argv[1:] or ["docs/plugins.md"]:
        print(f"{name}: {'updated' if sync(ROOT / name) else 'up to date'}")
