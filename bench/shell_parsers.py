"""Which shell reader agrees with bash: bashlex, tree-sitter-bash, or Co's strict reader.

Run: ``uv run --with bashlex python bench/shell_parsers.py [COUNT]`` (needs strace).
Generated commands (random quoting, escapes, line continuations, comments, here-documents
with every delimiter quoting, ``$'…'``) run in bash under ``strace -f -e trace=execve``
with harmless stub programs on PATH; each reader predicts the argv of every program the
command starts, and is counted as agreeing, disagreeing, or refusing (Co asks). A reader
that disagrees decides on one command while bash runs another.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROGRAMS = ["ls", "cat", "grep", "find", "wc", "sort"]
WORDS = ["-la", "a b", "x;y", "it's", 'say "hi"', "*.py", "--name=v", "#x", "{}", "a\\b", "~"]


def spell(word: str, rng: random.Random) -> str:
    way = rng.randrange(7)
    if way == 0 and re.fullmatch(r"[\w.=-]+", word):
        return word
    if way == 1:
        return "'" + word.replace("'", "'\\''") + "'"
    if way == 2:
        return '"' + re.sub(r'([\\"$`])', r"\\\1", word) + '"'
    if way == 3:
        return "".join("\\" + c for c in word)
    if way == 4:
        return "$'" + word.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if way == 5 and len(word) > 1:
        return spell(word[:1], rng) + spell(word[1:], rng)
    return "'" + word.replace("'", "'\\''") + "'"


def generate(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        commands = []
        for _ in range(rng.randrange(1, 4)):
            words = [rng.choice(PROGRAMS)] + rng.sample(WORDS, rng.randrange(0, 4))
            line = " ".join(spell(w, rng) for w in words)
            if rng.random() < 0.2:
                line = line.replace(" ", " \\\n ", 1)
            if rng.random() < 0.2:
                line += " # " + rng.choice(["note", "x; cat y", "'"])
            if rng.random() < 0.25:
                delimiter = rng.choice(["EOF", "'EOF'", '"EOF"', "\\EOF", "E'O'F", "-EOF"])
                bare = re.sub(r"[-'\"\\]", "", delimiter)
                body = rng.choice(["hi", f"'{bare}'", f" {bare}", "a\\tb"])
                line = f"{line} <<{delimiter}\n{body}\n{bare}"
            commands.append(line)
        out.append(rng.choice(["; ", " && ", " | ", "\n"]).join(commands))
    return out


def bash_runs(command: str, stubs: Path, work: Path) -> list[list[str]] | None:
    trace = work / "trace"
    env = {"PATH": str(stubs), "HOME": str(work), "LC_ALL": "C"}
    strace = [
        shutil.which("strace") or "strace",
        "-f",
        "-qq",
        "-xx",
        "-s",
        "4096",
        "-e",
        "trace=execve",
        "-o",
        str(trace),
    ]
    # a program that does not exist runs the handler: it is counted like the others
    handler = f'command_not_found_handle() {{ "{stubs}/_missing" "$@"; }}\n'
    done = subprocess.run(
        [*strace, "/bin/bash", "-c", handler + command],
        cwd=work,
        env=env,
        capture_output=True,
        timeout=10,
    )
    if done.returncode == 2 and b"syntax error" in done.stderr:
        return None
    runs, pending = [], {}
    for line in trace.read_text().splitlines()[1:]:
        pid = line.split(" ", 1)[0]
        found = re.search(r'execve\("[^"]*", \[(.*?)\]', line)
        if found:
            args = re.findall(r'"((?:\\x[0-9a-f]{2})*)"', found.group(1))
            pending[pid] = [bytes.fromhex(a.replace("\\x", "")).decode() for a in args]
        if line.rstrip().endswith("= 0") and pid in pending:
            argv = pending.pop(pid)
            runs.append(argv[1:] if argv[0].endswith("/_missing") else argv)
    return _distinct(runs)


def _distinct(runs: list[list[str]]) -> list[list[str]]:
    """Each program run once, in a fixed order (Co lists a repeated command once)."""
    return sorted(map(list, {tuple(r) for r in runs}))


def co_reads(command: str) -> list[list[str]] | None:
    from co_core.policy.shell import read_script

    script = read_script(command)
    if script.canonical is None:
        return None
    return _distinct([list(p.words) for p in script.parts if p.kind == "exec"])


def treesitter_reads(command: str) -> list[list[str]] | None:
    """tree-sitter-bash with quotes removed the way Codex does it (bash.rs)."""
    from co_core.policy.shell.rough import _parser

    source = command.encode()
    tree = _parser().parse(source)
    if tree.root_node.has_error:
        return None
    found = []

    def text(node: object) -> str:
        return source[node.start_byte : node.end_byte].decode()  # type: ignore[attr-defined]

    def word(node: object) -> str:
        kind = node.type  # type: ignore[attr-defined]
        if kind == "raw_string":
            return text(node)[1:-1]
        if kind == "string":
            return text(node)[1:-1]
        if kind == "concatenation":
            return "".join(word(c) for c in node.named_children)  # type: ignore[attr-defined]
        return text(node)

    def walk(node: object) -> None:
        if node.type == "command":  # type: ignore[attr-defined]
            kids = [
                c
                for c in node.named_children
                if c.type
                not in (
                    "file_redirect",
                    "heredoc_redirect",
                    "herestring_redirect",
                    "variable_assignment",
                )
            ]  # type: ignore[attr-defined]
            found.append(
                [word(c.named_children[0] if c.type == "command_name" else c) for c in kids]
            )
        for child in node.children:  # type: ignore[attr-defined]
            walk(child)

    walk(tree.root_node)
    return _distinct(found)


def bashlex_reads(command: str) -> list[list[str]] | None:
    try:
        import bashlex
    except ImportError:
        return None
    try:
        trees = bashlex.parse(command)
    except Exception:
        return None
    found = []

    class Visitor(bashlex.ast.nodevisitor):  # type: ignore[misc]
        def visitcommand(self, node: object, parts: list[object]) -> None:
            found.append([p.word for p in parts if p.kind == "word"])  # type: ignore[attr-defined]

    for tree in trees:
        Visitor().visit(tree)
    return _distinct(found)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    readers = {"co": co_reads, "tree-sitter": treesitter_reads, "bashlex": bashlex_reads}
    tally = {name: {"agree": 0, "disagree": 0, "refuse": 0, "ms": 0.0} for name in readers}
    with tempfile.TemporaryDirectory() as tmp:
        stubs, work = Path(tmp, "bin"), Path(tmp, "work")
        stubs.mkdir()
        work.mkdir()
        for name in [*PROGRAMS, "_missing"]:
            (stubs / name).write_text("#!/bin/sh\n")
            (stubs / name).chmod(0o755)
        commands = generate(count)
        judged = 0
        for command in commands:
            truth = bash_runs(command, stubs, work)
            if truth is None:
                continue  # bash itself refuses it
            judged += 1
            for name, read in readers.items():
                start = time.perf_counter()
                seen = read(command)
                tally[name]["ms"] += (time.perf_counter() - start) * 1000
                key = "refuse" if seen is None else "agree" if seen == truth else "disagree"
                tally[name][key] += 1
    print(f"{judged} generated commands bash accepts ({count} made)")
    for name, t in tally.items():
        print(
            f"{name:12} agree {t['agree']:4}  disagree {t['disagree']:4}  refuse {t['refuse']:4}"
            f"  {t['ms'] / max(judged, 1):.3f} ms/command"
        )
    if "bashlex" in tally and tally["bashlex"]["refuse"] == judged:
        print("(bashlex is not installed: uv run --with bashlex python bench/shell_parsers.py)")


if __name__ == "__main__":
    os.environ.setdefault("LC_ALL", "C")
    main()
