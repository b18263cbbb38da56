"""Co's read-only preset against a public peer: OpenAI Codex's own command-safety tests.

Run: ``uv run python bench/compare_codex.py`` (``--markdown`` prints the tables in
docs/policy.md). Every case of Codex's ``is_known_safe_command`` tests (transcribed, with
attribution, in bench/codex/command_safety.json), and Co's own cases judged by Codex's
rules (bench/codex/beyond.json: where a table of exact forms and a list of programs
differ), go through Co's policy engine with only the ``read-only`` preset on, as a
``run_shell_command`` call. The report lists every command Co runs without asking that
Codex asks about, with the reason, and the commands Codex runs that Co asks about.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

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


def compare() -> list[Row]:
    """Every case, decided by Co with only the read-only preset (in private Co dirs)."""
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
    rows = []
    cases = [(case, False) for case in json.loads(DATA.read_text())["cases"]]
    cases += [(case, True) for case in json.loads(BEYOND.read_text())["cases"]]
    try:
        for case, beyond in cases:
            command = co_command(case["argv"])
            call = engine.make_call("run_shell_command", {"cmd": command}, deps)
            decision = engine.decide(call)
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
    finally:
        deps.close()
    return rows


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


def _cell(text: str) -> str:
    return text.replace("|", chr(92) + "|")


if __name__ == "__main__":
    main()
