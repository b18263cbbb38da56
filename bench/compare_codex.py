"""Co's read-only preset against a public peer: OpenAI Codex's own command-safety tests.

Run: ``uv run python bench/compare_codex.py`` (``--markdown`` prints the tables in
docs/policy.md; ``--generated`` also judges every command generated from Co's table). Every case of Codex's ``is_known_safe_command`` tests (transcribed, with
attribution, in bench/codex/command_safety.json), and Co's own cases judged by Codex's
rules (bench/codex/beyond.json: where a table of exact forms and a list of programs
differ), go through Co's policy engine with only the ``read-only`` preset on, as a
``run_shell_command`` call. The report lists every command Co runs without asking that
Codex asks about, with the reason, and the commands Codex runs that Co asks about.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "codex" / "command_safety.json"
BEYOND = Path(__file__).parent / "codex" / "beyond.json"
SHELLS = {"bash", "zsh", "sh"}
# Why Co runs these without asking although Codex asks (the `why_co_allows` of a case).
WHY = {
    "git-read": (
        "git's reading subcommands are rows of the preset's table, each with the options "
        "it may take spelled exactly, and run read-only. Codex asks for every git command "
        "because git runs programs named in its configuration; in Co's sandboxes `.git` is "
        "read-only, and no row lists what sets or switches configuration (`-c`, `-C`, "
        "`--git-dir`, `git config x y`, `--output`, `--ext-diff`, `--textconv`, aliases)"
    ),
    "subshell": (
        "Co reads `( … )` and `{ …; }` and re-spells them; every command inside is "
        "decided on its own. Codex's parser does not accept parentheses"
    ),
    "background": (
        "`&` runs both commands; each is decided. In Co's sandboxes everything a command "
        "started ends with it, so nothing outlives the call"
    ),
}


# -- Codex's rules, restated (not its code): what is_known_safe_command runs unasked ----------
# As docs/policy.md and bench/codex/beyond.json describe them: a fixed list of programs
# with any arguments, find/rg/base64 without the options they name, sed only as
# `sed -n N[,M]p [FILE]`, and a `bash -lc` script of plain words joined by && || ; |.
# It is checked against every verdict of command_safety.json and beyond.json
# (tests/test_policy_presets.py), so it says what Codex says on those.
CODEX_ANY_ARGS = {
    "cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id", "ls", "nl", "paste",
    "pwd", "rev", "seq", "stat", "tail", "tr", "true", "uname", "uniq", "wc", "which",
    "whoami", "numfmt", "tac",
}  # fmt: skip
CODEX_FIND_NOT = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint"}
CODEX_FIND_NOT |= {"-fprint0", "-fprintf"}


def codex_runs_argv(argv: list[str]) -> bool:
    """Whether Codex runs this argv without asking (its exec-level list)."""
    if not argv:
        return False
    program, args = argv[0].rsplit("/", 1)[-1], argv[1:]
    if program in CODEX_ANY_ARGS:
        return True
    if program == "base64":
        return not any(
            a in ("-o", "--output") or a.startswith("--output=") or a.startswith("-o") for a in args
        )
    if program == "find":
        return not any(a in CODEX_FIND_NOT for a in args)
    if program == "rg":
        return not any(
            a in ("-z", "--search-zip")
            or any(a == o or a.startswith(o + "=") for o in ("--pre", "--hostname-bin"))
            for a in args
        )
    if program == "sed":
        return (
            len(argv) <= 4
            and args[:1] == ["-n"]
            and re.fullmatch(r"[0-9]+(,[0-9]+)?p", args[1] if len(args) > 1 else "") is not None
        )
    return False


def codex_runs(argv: list[str]) -> bool:
    """is_known_safe_command: the argv itself, or `bash|zsh -lc|-c SCRIPT` of plain commands."""
    if codex_runs_argv(argv):
        return True
    if len(argv) == 3 and argv[0] in SHELLS and argv[1] in ("-lc", "-c"):
        commands = _plain_commands(argv[2])
        return bool(commands) and all(codex_runs_argv(c) for c in commands)
    return False


def _plain_commands(script: str) -> list[list[str]] | None:
    """The commands of a script of plain words (quoted or not, no expansion, no
    assignment, no redirection, no parentheses) joined by && || ; |; else None."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    if re.search(r"\$|`", re.sub(r"'[^']*'", "", script)):
        return None  # an expansion outside single quotes
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in ("&&", "||", ";", "|"):
            if not commands[-1]:
                return None
            commands.append([])
        elif set(token) <= set(";&|()<>"):
            return None
        else:
            if not commands[-1] and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", token):
                return None
            commands[-1].append(token)
    return commands if commands[-1] else None


@dataclass(frozen=True)
class Row:
    argv: tuple[str, ...]
    command: str  # what Co is given
    codex: str  # "safe" | "unsafe"
    co: str  # Co's effect
    reason: str
    kind: str | None  # why Co allows what Codex asks about (a key of WHY)
    beyond: bool = False  # one of Co's own cases (beyond.json), not of Codex's tests
    note: str = ""  # beyond.json: what Co sees in it

    @property
    def why(self) -> str | None:
        return WHY[self.kind] if self.kind else (self.note or None)


def co_command(argv: list[str]) -> str:
    """The command line Co's run_shell_command gets for Codex's argv."""
    if len(argv) == 3 and argv[0] in SHELLS and argv[1] in ("-lc", "-c"):
        return argv[2]
    return shlex.join(argv)


@contextlib.contextmanager
def deciding() -> Iterator[Callable[[str], Any]]:
    """Co's policy with only the read-only preset on (in private Co dirs): command -> decision."""
    tmp = Path(tempfile.mkdtemp())
    for kind in ("config", "data", "cache"):
        os.environ[f"CO_{kind.upper()}_DIR"] = str(tmp / kind)
    (tmp / "config").mkdir()
    (tmp / "config" / "settings.json").write_text(
        json.dumps({"policy": {"presets": ["read-only"]}, "shell": {"sandbox": "none"}})
    )
    from co_core.kernel.app import load_app
    from co_core.policy import PolicyEngine

    app = load_app(tmp)
    engine = PolicyEngine.from_app(app, workspace=tmp, audit=False)
    deps = app.make_deps(tmp)
    try:
        yield lambda command: engine.decide(
            engine.make_call("run_shell_command", {"cmd": command}, deps)
        )
    finally:
        deps.close()


def compare() -> list[Row]:
    """Every case, decided by Co with only the read-only preset."""
    rows = []
    cases = [(case, False) for case in json.loads(DATA.read_text())["cases"]]
    cases += [(case, True) for case in json.loads(BEYOND.read_text())["cases"]]
    with deciding() as decide:
        for case, beyond in cases:
            command = co_command(case["argv"])
            decision = decide(command)
            rows.append(
                Row(
                    tuple(case["argv"]),
                    command,
                    case["codex"],
                    decision.effect,
                    decision.reason,
                    case.get("why_co_allows"),
                    beyond,
                    case.get("co_note", ""),
                )
            )
    return rows


def compare_generated() -> list[tuple[str, str, str, str]]:
    """Every command generated from Co's table (tests/preset_forms.py: each row with each
    option alone, attached, separate, clustered, abbreviated, after --, an unlisted option,
    an operand too many), judged both ways: (command, row, variant, "Co runs, Codex asks")."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import preset_forms

    judged = []
    with deciding() as decide:
        for g in preset_forms.generate():
            co = "Co runs" if decide(g.command).effect == "allow" else "Co asks"
            runs = codex_runs(["bash", "-lc", g.text]) if g.text else codex_runs_argv(list(g.argv))
            judged.append(
                (g.command, g.row, g.variant, f"{co}, Codex {'runs' if runs else 'asks'}")
            )
    return judged


def print_generated() -> None:
    """Every Codex program has a row in Co's table, so the generated forms cover both lists."""
    judged = compare_generated()
    print(f"\nEvery command generated from Co's table, judged both ways ({len(judged)}):")
    by = {"Co runs, Codex asks": 1, "Co asks, Codex runs": 2}  # per row, per variant
    for pair in ("Co runs, Codex runs", "Co asks, Codex asks", *by):
        cases = [j for j in judged if j[3] == pair]
        print(f"  {pair}: {len(cases)}")
        if pair in by:
            counts = collections.Counter(j[by[pair]] for j in cases)
            first = {j[by[pair]]: j[0] for j in reversed(cases)}
            what = "row" if by[pair] == 1 else "variant"
            for key, n in counts.most_common():
                print(f"      {n:5}  {what} {key:28} e.g. {first[key]}")


def main() -> None:
    rows = compare()
    looser = [r for r in rows if r.co == "allow" and r.codex == "unsafe"]
    stricter = [r for r in rows if r.co != "allow" and r.codex == "safe"]
    if "--markdown" in sys.argv:
        print("| command (as Co gets it) | Codex | Co | why Co runs it |")
        print("|---|---|---|---|")
        for r in {r.command: r for r in looser}.values():
            print(f"| `{_cell(r.command)}` | asks | runs | {r.kind or r.note} |")
        print()
        for kind in dict.fromkeys(r.kind for r in looser if r.kind):
            print(f"- **{kind}**: {WHY[kind]}.")
        print()
        print("| command (as Co gets it) | Codex | Co | why Co asks |")
        print("|---|---|---|---|")
        for r in {r.command: r for r in stricter}.values():
            print(f"| `{_cell(r.command)}` | runs | asks | {r.note} |")
        return
    own = sum(r.beyond for r in rows)
    print(
        f"{len(rows) - own} cases from Codex's tests and {own} of Co's judged by Codex's "
        "rules; Co with only the read-only preset on."
    )
    print(f"\nCo runs without asking, Codex asks ({len(looser)}):")
    for r in looser:
        print(f"  {r.command!r}\n      why: {r.why or 'UNEXPLAINED'}")
    print(f"\nCodex runs without asking, Co asks ({len(stricter)}):")
    for r in stricter:
        print(f"  {r.command!r}\n      Co: {r.reason}")
    same = len(rows) - len(looser) - len(stricter)
    print(f"\nThe same verdict: {same} of {len(rows)}.")
    if "--generated" in sys.argv:
        print_generated()


def _cell(text: str) -> str:
    return text.replace("|", chr(92) + "|")


if __name__ == "__main__":
    main()
