"""A small multilingual vault, written by :func:`build`, with the links and backlinks
Obsidian resolves in it, worked out by hand from Obsidian's rules (see docs/obsidian.md,
*Links*): exact path first; among same-name files, those whose path starts with the
linking note's folder, then the shortest path; ``[[a/b]]`` matches by path suffix;
any case, NFC = NFD, accents count; ``./`` and ``../`` relative to the linking note;
``[[#x]]`` is the note itself; aliases do not resolve links.

Paths in the expectations are NFC; ``NFD_NAMES`` are written to disk decomposed (as
macOS does), so tools report them decomposed and tests compare in NFC.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

NFD_NAMES = {"Café.md"}

NOTES: dict[str, str] = {
    "Home.md": """---
aliases: [Start page]
---
# Home
Plans: [[Plan]], [[Old/Plan]], [[Projects/Plan]], [[projects/plan|lower case]], [[/Plan]], [[Plan.md]], [[ld/Plan]].
Embedded: ![[Status]]
Names: [[Credits]], [[crèdits]], [[Themes]], [[Café]], [[Σημειώσεις]], [[Σημειωσεις]], [[Upper Case]], [[v1.2 Release]], [[Bob the Builder]], [[Robert]]
Here: [[#Home]] and [[Home]].
Files: ![[diagram.png]], [[Report.pdf]], ![[logo.svg]], [[Board.canvas]], [[Board]], ![[missing.png]]
Markdown: [the plan](Projects/Plan.md), [report](Projects/Status%20Report.md), [web](https://example.com/Plan.md), ![d](assets/diagram.png)
Code: `[[InCode]]`
```
[[InFence]]
```
%% [[InComment]] %%
""",
    "Projects/Status.md": """---
up: "[[Home]]"
related:
  - "[[Plan]]"
---
# Status
Same folder: [[Plan]] and [[./Plan]] and [[Plan#Goals|goals]].

| Project | Link |
|---|---|
| Alpha | [[Projects/Plan\\|the plan]] |
| Report | [[Status Report\\|report]] |
""",
    "Projects/Plan.md": "# Plan\n## Goals\nBack to [[Status]]. ^block\n",
    "Projects/Status Report.md": "Report of [[Plan#^block]].\n",
    "Project/Draft.md": "A draft about the [[Plan]].\n",
    "Archive/Plan.md": "Old plan. See [[../Projects/Plan]].\n",
    "Archive/Index.md": "[[Plan]] [[Old/Plan]] [[../Home]]\n",
    "Archive/Old/Plan.md": "Oldest. Up: [[../Plan]]\n",
    "Archive/Old/Notes.md": "Notes on the [[Plan]].\n",
    "Crèdits.md": "Thanks to everyone.\n",
    "Thèmes.md": "Themes, and the [[Crèdits]].\n",
    "Café.md": "Espresso notes. See the [[Re\u0301sume\u0301]].\n",  # the link typed in NFD
    "Résumé.md": "Curriculum. Back to [[café]].\n",
    "Ελληνικά/Σημειώσεις.md": "# Σημειώσεις\nΟι σημειώσεις μου για το ταξίδι. [[Home]]\n",
    "Русский/Ёлка.md": "Новогодняя ёлка стоит в зале.\n",
    "日本語/様々なメモ.md": "様々な考えを書く。東京タワーに行った。[[Plan]]\n",
    "ไทย/บันทึก.md": "วันนี้ไปตลาดกับเพื่อนสวัสดีครับ\n",
    "Khmer/កំណត់ត្រា.md": "ខ្ញុំស្រឡាញ់ភាសាខ្មែរណាស់\n",
    "Lao/ບັນທຶກ.md": "ສະບາຍດີເພື່ອນຂອງຂ້ອຍ\n",
    "Burmese/မှတ်စု.md": "မင်္ဂလာပါခင်ဗျာနေကောင်းလား\n",
    "Polski/Interpretowanie.md": "---\naliases: [Interpretowanie stron internetowych]\n---\n"
    "Jak przeglądarka czyta strony.\n",
    "People/Robert.md": "---\naliases: Bob the Builder\n---\nRobert builds things.\n",
    "Upper Case.MD": "A note with an upper-case extension. [[Home]]\n",
    "v1.2 Release.md": "Release notes, see [[Upper Case]].\n",
}

ATTACHMENTS: dict[str, bytes] = {
    "assets/diagram.png": b"\x89PNG\r\n\x1a\n\0\0\0",
    "assets/Report.pdf": b"%PDF-1.4\n",
    "assets/logo.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>",
    "Board.canvas": b'{"nodes": [], "edges": []}',
    ".obsidian/app.json": b"{}",
}

# every link of every note, in order: (as written, the file it leads to or None)
LINKS: dict[str, list[tuple[str, str | None]]] = {
    "Home.md": [
        ("[[Plan]]", "Archive/Plan.md"),  # shortest of three same-name notes
        ("[[Old/Plan]]", "Archive/Old/Plan.md"),  # path suffix
        ("[[Projects/Plan]]", "Projects/Plan.md"),  # exact path
        ("[[projects/plan|lower case]]", "Projects/Plan.md"),  # any case
        ("[[/Plan]]", None),  # from the vault root: no Plan.md there
        ("[[Plan.md]]", "Archive/Plan.md"),
        ("[[ld/Plan]]", "Archive/Old/Plan.md"),  # a suffix of the path, as Obsidian matches
        ("![[Status]]", "Projects/Status.md"),
        ("[[Credits]]", None),  # accents count: not Crèdits.md
        ("[[crèdits]]", "Crèdits.md"),
        ("[[Themes]]", None),  # not Thèmes.md
        ("[[Café]]", "Café.md"),  # NFC link, NFD file name
        ("[[Σημειώσεις]]", "Ελληνικά/Σημειώσεις.md"),
        ("[[Σημειωσεις]]", None),  # without the tonos: another name
        ("[[Upper Case]]", "Upper Case.MD"),
        ("[[v1.2 Release]]", "v1.2 Release.md"),  # a dot in the name is no extension
        ("[[Bob the Builder]]", None),  # an alias does not resolve a link
        ("[[Robert]]", "People/Robert.md"),
        ("[[#Home]]", "Home.md"),  # a heading of the note itself
        ("[[Home]]", "Home.md"),
        ("![[diagram.png]]", "assets/diagram.png"),
        ("[[Report.pdf]]", "assets/Report.pdf"),
        ("![[logo.svg]]", "assets/logo.svg"),
        ("[[Board.canvas]]", "Board.canvas"),
        ("[[Board]]", None),  # a canvas is only reached with its extension
        ("![[missing.png]]", None),
        ("[the plan](Projects/Plan.md)", "Projects/Plan.md"),
        ("[report](Projects/Status%20Report.md)", "Projects/Status Report.md"),
        ("![d](assets/diagram.png)", "assets/diagram.png"),
    ],
    "Projects/Status.md": [
        ("[[Home]]", "Home.md"),  # frontmatter
        ("[[Plan]]", "Projects/Plan.md"),  # frontmatter list; the same folder first
        ("[[./Plan]]", "Projects/Plan.md"),
        ("[[Plan#Goals|goals]]", "Projects/Plan.md"),
        ("[[Projects/Plan\\|the plan]]", "Projects/Plan.md"),  # a table link
        ("[[Status Report\\|report]]", "Projects/Status Report.md"),
    ],
    "Projects/Plan.md": [("[[Status]]", "Projects/Status.md")],
    "Projects/Status Report.md": [("[[Plan#^block]]", "Projects/Plan.md")],
    # "Project" is a prefix of "Projects/": Obsidian counts that note as in the folder
    "Project/Draft.md": [("[[Plan]]", "Projects/Plan.md")],
    "Archive/Plan.md": [("[[../Projects/Plan]]", "Projects/Plan.md")],
    "Archive/Index.md": [
        ("[[Plan]]", "Archive/Plan.md"),  # in the folder, then the shortest
        ("[[Old/Plan]]", "Archive/Old/Plan.md"),
        ("[[../Home]]", "Home.md"),
    ],
    "Archive/Old/Plan.md": [("[[../Plan]]", "Archive/Plan.md")],
    "Archive/Old/Notes.md": [("[[Plan]]", "Archive/Old/Plan.md")],
    "Crèdits.md": [],
    "Thèmes.md": [("[[Crèdits]]", "Crèdits.md")],
    "Café.md": [("[[Re\u0301sume\u0301]]", "Résumé.md")],
    "Résumé.md": [("[[café]]", "Café.md")],
    "Ελληνικά/Σημειώσεις.md": [("[[Home]]", "Home.md")],
    "Русский/Ёлка.md": [],
    "日本語/様々なメモ.md": [("[[Plan]]", "Archive/Plan.md")],
    "ไทย/บันทึก.md": [],
    "Khmer/កំណត់ត្រា.md": [],
    "Lao/ບັນທຶກ.md": [],
    "Burmese/မှတ်စု.md": [],
    "Polski/Interpretowanie.md": [],
    "People/Robert.md": [],
    "Upper Case.MD": [("[[Home]]", "Home.md")],
    "v1.2 Release.md": [("[[Upper Case]]", "Upper Case.MD")],
}

# the notes whose links lead to each note (a note linking to itself is its own backlink)
BACKLINKS: dict[str, list[str]] = {
    "Home.md": [
        "Archive/Index.md",
        "Home.md",
        "Projects/Status.md",
        "Upper Case.MD",
        "Ελληνικά/Σημειώσεις.md",
    ],
    "Projects/Plan.md": [
        "Archive/Plan.md",
        "Home.md",
        "Project/Draft.md",
        "Projects/Status Report.md",
        "Projects/Status.md",
    ],
    "Projects/Status.md": ["Home.md", "Projects/Plan.md"],
    "Projects/Status Report.md": ["Home.md", "Projects/Status.md"],
    "Project/Draft.md": [],
    "Archive/Plan.md": [
        "Archive/Index.md",
        "Archive/Old/Plan.md",
        "Home.md",
        "日本語/様々なメモ.md",
    ],
    "Archive/Index.md": [],
    "Archive/Old/Plan.md": ["Archive/Index.md", "Archive/Old/Notes.md", "Home.md"],
    "Archive/Old/Notes.md": [],
    "Crèdits.md": ["Home.md", "Thèmes.md"],
    "Thèmes.md": [],
    "Café.md": ["Home.md", "Résumé.md"],
    "Résumé.md": ["Café.md"],
    "Ελληνικά/Σημειώσεις.md": ["Home.md"],
    "Русский/Ёлка.md": [],
    "日本語/様々なメモ.md": [],
    "ไทย/บันทึก.md": [],
    "Khmer/កំណត់ត្រា.md": [],
    "Lao/ບັນທຶກ.md": [],
    "Burmese/မှတ်စု.md": [],
    "Polski/Interpretowanie.md": [],
    "People/Robert.md": ["Home.md"],
    "Upper Case.MD": ["Home.md", "v1.2 Release.md"],
    "v1.2 Release.md": ["Home.md"],
}


def on_disk(rel: str) -> str:
    """The name a path is written under (decomposed for NFD_NAMES)."""
    return unicodedata.normalize("NFD", rel) if rel in NFD_NAMES else rel


def build(root: Path) -> Path:
    """Write the vault under ``root``."""
    for rel, text in NOTES.items():
        path = root / on_disk(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for rel, data in ATTACHMENTS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)
