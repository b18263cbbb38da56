"""A small multilingual vault, written by :func:`build`, with the links and backlinks
Obsidian resolves in it, worked out by hand from Obsidian's rules (see docs/obsidian.md,
*Links*): exact path first; among same-name files, those whose path starts with the
linking note's folder, then the shortest path; ``[[a/b]]`` matches by path suffix;
any case, NFC = NFD, accents count; ``./`` and ``../`` relative to the linking note;
``[[#x]]`` is the note itself; aliases do not resolve links.

The ``Syntax/`` notes and ``Crème/Brûlée.md`` hold the Markdown Obsidian reads in its
own way, with the tags (``TAGS``), links and sections (``SECTIONS``) Obsidian sees in
them, worked out by hand from its rules (docs/obsidian.md, *How notes are read*): tags
only where a tag may start and never in code, math, HTML or comments; code the CommonMark
way (longer fences, fences in callouts and lists, info strings); heading links that are
not tags; block ids on paragraphs, list items, callouts and tables.

Paths in the expectations are NFC; ``NFD_NAMES`` are written to disk decomposed (as
macOS does), so tools report them decomposed and tests compare in NFC.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

NFD_NAMES = {"Café.md", "Crème/Brûlée.md"}

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
    "Syntax/Tags.md": """---
Tags: [Work, "#project/alpha", 2024, a.b]
---
# Tags in text
#start-of-line and mid sentence #Mixed_Case, then #mixed_case again.
Nested: #area/topic, #Projekt/Über, #日本語/メモ, #проект/план and #🚀launch.
Spaces: tab\t#after-tab, no-break\u00a0#after-nbsp, 全角\u3000#after-ideographic
Ends at punctuation: #stop. #colon:rest #comma, #tn/#to #tl#tm
Emphasis: _#emph_ and **#bold**
In parentheses: (#paren) and （#fullwidth-paren）; CJK punctuation ends one: #句点。 and #読点、then #括弧）
Not tags: #123 #2024 [#bracket] "#quoted" a#mid .#dot \\#escaped
URLs: https://example.com/page#fragment, example.com/#frag and <https://x.y/#auto>
#NoSpaceHeading
""",
    "Syntax/Code.md": """# Code the CommonMark way
Prose #code-prose and a link to [[Home]].

````markdown
```
#in-four-fence [[InFourFence]]
```
````

```
#in-fence
```yaml
#still-in-fence [[StillInFence]]
```

~~~python
# comment #tilde-fence
~~~

> [!note] A callout with code
> ```js
> let x = "#in-callout-fence"; // [[InCalloutFence]]
> ```
> Text in the callout #callout-text

- A list
  > ```
  > #in-list-quote-fence [[InListQuoteFence]]
  > ```
  - deeper #list-deep

Indented:

    #indented-code [[InIndentedCode]]

Inline: `#inline-code`, `` #double ` tick [[InTicks]] ``, ``` ``#triple`` ``` and $#math$ and $$ #display $$.

$$
#math-block
$$

<div>
#in-html [[InHtml]]
</div>

Comment %% #in-comment [[InComment]] %% then #after-comment.

%%
#in-block-comment

[[InBlockComment]]
%%

Final #final-tag and [[Archive/Plan|the old plan]].
""",
    "Syntax/Sections.md": """---
aliases: [Projects/Alpha, "Q1/Q2 review"]
---
# Sections
See [[#Usage notes]], ![[#Usage notes]], [the anchor](#usage-notes), [[Sections#Step 1: Install]] and [[#^intro-list]].

## Step 1: Install
Run the installer. ^install-step

- first item ^intro-list
  - nested child
- second item

## Usage notes
Use it daily.

> [!tip] Remember
> Save often.

^tip-callout

| Key | Value |
|---|---|
| a | [[Projects/Status\\|status]] |

^the-table

### Details
More detail.

Setext heading
--------------
Under setext.

# Ελληνικά Σημειώσεις
Κείμενο #ελληνικά.
""",
    "Syntax/Blocks.md": """# Blocks
1. ordered first
2. ordered second
   continued ^ordered-two

> Quote line one
> quote line two ^quote-end

Paragraph A
still A ^para-a

- outer
  - inner item ^inner-id
    - innermost

From elsewhere: [[Syntax/Sections#^intro-list]]
""",
    "Crème/Brûlée.md": "Dessert notes #dessert/français\n",
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
    "Syntax/Tags.md": [],
    "Syntax/Code.md": [
        ("[[Home]]", "Home.md"),
        ("[[Archive/Plan|the old plan]]", "Archive/Plan.md"),
    ],
    "Syntax/Sections.md": [  # a heading or block of the note itself is a link to it
        ("[[#Usage notes]]", "Syntax/Sections.md"),
        ("![[#Usage notes]]", "Syntax/Sections.md"),
        ("[the anchor](#usage-notes)", "Syntax/Sections.md"),
        ("[[Sections#Step 1: Install]]", "Syntax/Sections.md"),
        ("[[#^intro-list]]", "Syntax/Sections.md"),
        ("[[Projects/Status\\|status]]", "Projects/Status.md"),
    ],
    "Syntax/Blocks.md": [("[[Syntax/Sections#^intro-list]]", "Syntax/Sections.md")],
    "Crème/Brûlée.md": [],
}

# the notes whose links lead to each note (a note linking to itself is its own backlink)
BACKLINKS: dict[str, list[str]] = {
    "Home.md": [
        "Archive/Index.md",
        "Home.md",
        "Projects/Status.md",
        "Syntax/Code.md",
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
    "Projects/Status.md": ["Home.md", "Projects/Plan.md", "Syntax/Sections.md"],
    "Projects/Status Report.md": ["Home.md", "Projects/Status.md"],
    "Project/Draft.md": [],
    "Archive/Plan.md": [
        "Archive/Index.md",
        "Archive/Old/Plan.md",
        "Home.md",
        "Syntax/Code.md",
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
    "Syntax/Tags.md": [],
    "Syntax/Code.md": [],
    "Syntax/Sections.md": ["Syntax/Blocks.md", "Syntax/Sections.md"],
    "Syntax/Blocks.md": [],
    "Crème/Brûlée.md": [],
}

# the tags of every note that has any (as compared: lower case, no "#")
TAGS: dict[str, list[str]] = {
    "Syntax/Tags.md": [
        *("work", "project/alpha"),  # front matter `Tags:`; 2024 and a.b are no tags
        *("start-of-line", "mixed_case", "area/topic", "projekt/über", "日本語/メモ"),
        *("проект/план", "🚀launch", "after-tab", "after-nbsp", "after-ideographic"),
        *("stop", "colon", "comma", "tn", "to", "tl", "tm", "emph", "bold", "nospaceheading"),
        *("paren", "fullwidth-paren", "句点", "読点", "括弧"),
    ],
    "Syntax/Code.md": ["code-prose", "callout-text", "list-deep", "after-comment", "final-tag"],
    "Syntax/Sections.md": ["ελληνικά"],
    "Crème/Brûlée.md": ["dessert/français"],
}

# words written as tags where Obsidian sees none (in code, links, URLs, comments, ...)
NOT_TAGS = [
    *("usage", "usage-notes", "step", "intro-list", "anchor", "home", "goals", "block"),
    *("123", "2024", "bracket", "quoted", "mid", "dot", "escaped", "rest"),
    *("fragment", "frag", "auto", "in-four-fence", "in-fence", "still-in-fence"),
    *("tilde-fence", "in-callout-fence", "in-list-quote-fence", "indented-code"),
    *("inline-code", "double", "triple", "math", "display", "math-block", "in-html"),
    *("in-comment", "in-block-comment", "a.b"),
]

# (name as typed, the note, what read_note says it shows, the text it shows)
SECTIONS: list[tuple[str, str, str, str]] = [
    (
        "Syntax/Sections#Step 1: Install",
        "Syntax/Sections.md",
        "section 'Step 1: Install'",
        "## Step 1: Install\nRun the installer. ^install-step\n\n"
        "- first item ^intro-list\n  - nested child\n- second item\n",
    ),
    (  # any case, without the colon a link cannot hold
        "[[Sections#step 1 install]]",
        "Syntax/Sections.md",
        "section 'Step 1: Install'",
        "## Step 1: Install\nRun the installer. ^install-step\n\n"
        "- first item ^intro-list\n  - nested child\n- second item\n",
    ),
    (
        "Sections#Usage notes",
        "Syntax/Sections.md",
        "section 'Usage notes'",
        "## Usage notes\nUse it daily.\n\n> [!tip] Remember\n> Save often.\n\n^tip-callout\n\n"
        "| Key | Value |\n|---|---|\n| a | [[Projects/Status\\|status]] |\n\n^the-table\n\n"
        "### Details\nMore detail.\n",
    ),
    (  # a heading under a heading
        "Sections#Usage notes#Details",
        "Syntax/Sections.md",
        "section 'Details'",
        "### Details\nMore detail.\n",
    ),
    (
        "Sections#Setext heading",
        "Syntax/Sections.md",
        "section 'Setext heading'",
        "Setext heading\n--------------\nUnder setext.\n",
    ),
    (
        "Sections#ελληνικά σημειώσεις",
        "Syntax/Sections.md",
        "section 'Ελληνικά Σημειώσεις'",
        "# Ελληνικά Σημειώσεις\nΚείμενο #ελληνικά.\n",
    ),
    (  # an alias with a slash, and a section of that note
        "Projects/Alpha#Details",
        "Syntax/Sections.md",
        "section 'Details'",
        "### Details\nMore detail.\n",
    ),
    (
        "Sections#^install-step",
        "Syntax/Sections.md",
        "block ^install-step (paragraph)",
        "Run the installer. ^install-step\n",
    ),
    (
        "[[Syntax/Sections#^intro-list|the list]]",
        "Syntax/Sections.md",
        "block ^intro-list (list item)",
        "- first item ^intro-list\n  - nested child\n",
    ),
    (  # an id on a line of its own names the block before it
        "![[Sections#^tip-callout]]",
        "Syntax/Sections.md",
        "block ^tip-callout (callout)",
        "> [!tip] Remember\n> Save often.\n\n^tip-callout\n",
    ),
    (
        "Sections#^the-table",
        "Syntax/Sections.md",
        "block ^the-table (table)",
        "| Key | Value |\n|---|---|\n| a | [[Projects/Status\\|status]] |\n\n^the-table\n",
    ),
    (
        "Syntax/Blocks#^ordered-two",
        "Syntax/Blocks.md",
        "block ^ordered-two (list item)",
        "2. ordered second\n   continued ^ordered-two\n",
    ),
    (
        "Blocks#^quote-end",
        "Syntax/Blocks.md",
        "block ^quote-end (blockquote)",
        "> Quote line one\n> quote line two ^quote-end\n",
    ),
    (
        "Blocks#^para-a",
        "Syntax/Blocks.md",
        "block ^para-a (paragraph)",
        "Paragraph A\nstill A ^para-a\n",
    ),
    (
        "Blocks#^inner-id",
        "Syntax/Blocks.md",
        "block ^inner-id (list item)",
        "  - inner item ^inner-id\n    - innermost\n",
    ),
    (
        "[[Projects/Plan#^block]]",
        "Projects/Plan.md",
        "block ^block (paragraph)",
        "Back to [[Status]]. ^block\n",
    ),
    (
        "Projects/Plan#Goals",
        "Projects/Plan.md",
        "section 'Goals'",
        "## Goals\nBack to [[Status]]. ^block\n",
    ),
]


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
