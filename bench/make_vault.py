"""Generate a synthetic Obsidian vault for benchmarks: 10,000 notes, about 50 MB.

Notes have YAML frontmatter (tags as a list, as a string, ``tag:``, ``Tags:``, aliases,
some with ``/``, some missing or malformed), inline and nested ``#tags``,
``[[wikilinks]]`` and heading links (``[[#Section 2]]``), headings, code blocks (some
fenced with four backticks around three, some in callouts), block ids, URLs, and text
in several languages (English, French, German, Spanish, Russian, Japanese, Chinese,
with emoji). A few marker words are planted at known rates so benchmark queries
have predictable answers. Deterministic for a given ``--seed``.

    uv run python bench/make_vault.py /tmp/vault --notes 10000
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from pathlib import Path

EN = (
    "the of and to in is that for it as with was on be by this are from or at an have not "
    "project meeting budget review design garden recipe travel history music climate energy "
    "network server database python river mountain coffee letter weekly research paper idea "
    "summary question answer release planning customer feedback library kitchen morning night "
    "system memory index search window market school health running book chapter draft"
).split()
FR = "café élève être déjà façon garçon français réunion évènement bibliothèque forêt où très".split()
DE = "Straße Größe über Mädchen schön Übung Käse Brücke grün Frühling Bäckerei Äpfel".split()
ES = "niño mañana canción corazón españa árbol película música jalapeño señor".split()
RU = "привет мир проект встреча книга память сервер город река зима работа".split()
JA = [
    "東京",
    "京都",
    "会議",
    "議事録",
    "日本語",
    "プロジェクト",
    "タワー",
    "ラーメン",
    "勉強",
    "天気",
]
ZH = ["北京", "上海", "项目", "会议", "记录", "数据库", "搜索", "中文", "学习", "咖啡"]
EMOJI = ["🍕", "🚀", "✅", "📚", "🎉", "☕", "🔥"]
TAGS = ["work", "personal", "idea", "project/alpha", "project/beta", "reading", "travel", "日本"]
FOLDERS = ["", "daily", "projects", "projects/alpha", "reading", "travel", "archive", "people"]

CODE = [
    "\n```python\n# not_a_tag\nprint('index search')\n```\n",
    "\n````markdown\n```yaml\ntags: [#not_a_tag]\n```\n````\n",
    "\n> [!note] Code in a callout\n> ```\n> #not_a_tag [[Not a link]]\n> ```\n\n",
]

# planted marker words: (word, probability a note contains it)
MARKERS = [("zanzibar", 0.002), ("quokka", 0.01), ("xylophone", 0.05)]


def paragraph(rng: random.Random, words: int) -> str:
    roll = rng.random()
    if roll < 0.70:
        pool = EN
    elif roll < 0.78:
        pool = EN + FR
    elif roll < 0.84:
        pool = EN + DE
    elif roll < 0.88:
        pool = EN + ES
    elif roll < 0.92:
        pool = RU
    elif roll < 0.96:
        return "".join(rng.choices(JA, k=words // 2)) + "。"
    else:
        return "".join(rng.choices(ZH, k=words // 2)) + "。"
    text = " ".join(rng.choices(pool, k=words))
    if rng.random() < 0.1:
        text += " " + rng.choice(EMOJI)
    return text.capitalize() + "."


def note(rng: random.Random, index: int, names: list[str], size: int) -> str:
    parts: list[str] = []
    style = rng.random()
    tags = rng.sample(TAGS, rng.randint(0, 3))
    if style < 0.5:
        parts.append(
            f"---\ntitle: Note {index}\ntags:\n" + "".join(f"  - {t}\n" for t in tags) + "\n---\n"
        )
    elif style < 0.7:
        parts.append(f"---\ntags: {' '.join(tags)}\ncreated: 2024-01-{index % 28 + 1:02d}\n---\n")
    elif style < 0.8:
        parts.append("---\ntag: %s\n---\n" % (tags[0] if tags else "misc"))
    elif style < 0.82:
        parts.append("---\ntags: [unclosed\n---\n")  # malformed YAML
    elif style < 0.86:
        alias = f"{rng.choice(FOLDERS[1:])}/{rng.choice(EN)}"  # an alias with a slash
        parts.append(f"---\nTags: {', '.join(tags)}\naliases: [{alias}]\n---\n")
    parts.append(f"# {names[index]}\n\n")
    if rng.random() < 0.5:
        parts.append(f"#{rng.choice(TAGS)} ")
    for marker, rate in MARKERS:
        if rng.random() < rate:
            parts.append(f"Remember the {marker} note. ")
    total = sum(len(p) for p in parts)
    section = 0
    while total < size:
        if rng.random() < 0.15:
            section += 1
            block = f"\n## {rng.choice(EN).capitalize()} {section}\n\n"
        elif rng.random() < 0.05:
            block = rng.choice(CODE)
        elif rng.random() < 0.05:
            block = f"See [[#{rng.choice(EN).capitalize()} {section}]] above. ^b{section}\n\n"
        elif rng.random() < 0.1:
            block = f"See [[{rng.choice(names)}]] and https://example.com/page#anchor.\n"
        else:
            block = paragraph(rng, rng.randint(30, 120)) + "\n\n"
        parts.append(block)
        total += len(block)
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--avg-bytes", type=int, default=4_500)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    if args.vault.exists():
        shutil.rmtree(args.vault)
    names = [f"Note {i} {rng.choice(EN)}" for i in range(args.notes)]
    total = 0
    for i in range(args.notes):
        folder = args.vault / rng.choice(FOLDERS)
        folder.mkdir(parents=True, exist_ok=True)
        size = int(rng.expovariate(1 / args.avg_bytes)) + 200
        text = note(rng, i, names, size)
        data = text.encode("utf-8")
        (folder / f"{names[i]}.md").write_bytes(data)
        total += len(data)
    (args.vault / ".obsidian").mkdir(exist_ok=True)
    (args.vault / ".obsidian" / "app.json").write_text('{"zanzibar": true}')
    (args.vault / "attachments").mkdir(exist_ok=True)
    (args.vault / "attachments" / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 1000)
    print(f"{args.notes} notes, {total / 1e6:.1f} MB in {args.vault}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
