"""Code in docs/*.md comes from tested files, never pasted: ``<!-- snippet: PATH#REGION -->``.

The fenced block right after a marker must equal the region of PATH between
``# docs: REGION`` and ``# /docs`` (or the whole file without ``#REGION``).
``python tests/doc_snippets.py`` rewrites the blocks from the sources; the test checks them.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(
    r"^<!-- snippet: (?P<path>[^#\s]+)(?:#(?P<region>[\w-]+))? -->\n"
    r"```(?P<lang>\w*)\n(?P<body>.*?)^```$",
    re.S | re.M,
)


def region(path: str, name: str | None) -> str:
    text = (ROOT / path).read_text(encoding="utf-8")
    if name is None:
        return text.strip("\n") + "\n"
    match = re.search(rf"^[ \t]*# docs: {re.escape(name)}\n(.*?)^[ \t]*# /docs$", text, re.S | re.M)
    if match is None:
        raise LookupError(f"{path} has no '# docs: {name}' ... '# /docs' region")
    return textwrap.dedent(match.group(1)).strip("\n") + "\n"


def snippets(doc: Path) -> list[tuple[str, str | None, str, str]]:
    """(path, region, shown, source) for every marked block of ``doc``."""
    text = doc.read_text(encoding="utf-8")
    return [
        (m["path"], m["region"], m["body"], region(m["path"], m["region"]))
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
