"""Issue 35's attack families, counted: held / total per family, two ways.

Run: ``uv run python bench/preset_attacks.py`` (``-v`` lists what the preset let through;
``--run`` runs what the broad rules let through in a throwaway bubblewrap sandbox, each in
a fresh copy of a small project, and says what it did). The
corpus is tests/preset_attacks.py (the issue's own examples and variants of each family,
written before the table was tuned); tests/test_preset_attacks.py requires every one to be
asked about with the preset, and tests/test_preset_kernel.py runs what the preset allows.

1. **The read-only preset**, nothing else on: an attack is held when it asks.
2. **A user's broad rules**, no preset: ``shell:exec:P *`` for the program each attack
   abuses (``sed``, ``env``, ``uniq``, ...), as a user who trusts that program would write.
   What still holds there is Co's program knowledge (co_core/policy/shell/programs.py):
   the arguments that write or run, which such a rule covers only by naming them. A
   program Co knows nothing about (``cp``, ``tee``, ``tail``) is the user's to trust.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import preset_attacks  # noqa: E402  (the corpus lives with the tests)

from co_core.policy import PolicyEngine  # noqa: E402
from co_core.testing import make_app  # noqa: E402

ISSUE = {  # the issue's own examples (tests/test_preset_attacks.py checks they are there)
    "sed --expr='1e touch PWNED' x", "sed --e='w PWNED' x", "env --ch=tools git status",
    "file --comp -m x", "sed -n 'w PWNED' x -- --sandbox", "env -iC tools ls",
    "printf -v'a[$(touch PWNED)]' x", "uniq -- -z PWNED",
    "xargs -a /dev/null --process-slot-var=LD_LIBRARY_PATH ls",
    "sed -n 's/[/]/x/;w PWNED' x", "sed ':a e touch PWNED' x", "sed -n 'ba w PWNED' x",
    "sed 'v 4.2 e touch PWNED' x",
}  # fmt: skip
OPERATORS = {";", "&&", "||", "|", "&"}


def programs(command: str) -> set[str]:
    """The first word of each simple command (good enough for rules: the corpus is plain)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return {command.split()[0]}
    firsts, start = set(), True
    for word in words:
        if start and "=" not in word:
            firsts.add(word)
        start = word in OPERATORS
    return firsts


def decider(settings: dict[str, Any], workspace: Path) -> tuple[Callable[[str], Any], Any]:
    app = make_app({**settings, "shell": {"sandbox": "none"}}, cwd=workspace)
    engine = PolicyEngine.from_app(app, workspace=workspace, audit=False)
    deps = app.make_deps(workspace)

    def decide(command: str) -> Any:
        return engine.decide(engine.make_call("run_shell_command", {"cmd": command}, deps))

    return decide, deps


def _project(root: Path) -> None:
    """What the corpus names: x, a folder tools/ with an ls that leaves a mark, a git repo."""
    (root / "x").write_text("x\n")
    (root / "tools").mkdir()
    (root / "tools" / "ls").write_text("#!/bin/sh\ntouch /tmp/w/RAN_TOOLS_LS\n")
    (root / "tools" / "ls").chmod(0o755)
    (root / "evil.so").write_bytes(b"\x7fELF")
    git = ["git", "-C", str(root), "-c", "user.name=co", "-c", "user.email=co@x"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "x"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)


def run_in_bwrap(command: str) -> str:
    """Run it in a fresh project (writable), the rest of the system read-only, no network,
    for at most 3 s: what it created or changed, or how it ended."""
    root = Path(tempfile.mkdtemp(prefix="co-attack-run-"))
    try:
        _project(root)
        before = {p: p.stat().st_mtime_ns for p in root.rglob("*") if ".git" not in p.parts}
        argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        argv += [
            "--tmpfs",
            "/tmp",
            "--bind",
            str(root),
            "/tmp/w",
            "--chdir",
            "/tmp/w",
            "--unshare-all",
        ]
        argv += ["--die-with-parent", "--", "timeout", "3", "bash", "-c", command]
        done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        after = {p: p.stat().st_mtime_ns for p in root.rglob("*") if ".git" not in p.parts}
        new = sorted(str(p.relative_to(root)) for p in after if p not in before)
        changed = sorted(str(p.relative_to(root)) for p in before if after.get(p) != before[p])
        if new or changed:
            return "wrote " + ", ".join(new + changed)
        if done.returncode == 124:
            return "ran until stopped (3 s)"
        return "wrote nothing" + (f" (exit {done.returncode})" if done.returncode else "")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    verbose = "-v" in sys.argv
    workspace = Path(tempfile.mkdtemp(prefix="co-attacks-"))
    (workspace / "x").write_text("x\n")
    preset, deps = decider({"policy": {"presets": ["read-only"]}}, workspace)
    names = sorted({p for cs in preset_attacks.FAMILIES.values() for c in cs for p in programs(c)})
    rules = [{"match": f"shell:exec:{p} *", "effect": "allow"} for p in names if p != "touch"]
    broad, broad_deps = decider({"policy": {"rules": rules}}, workspace)
    totals = [0, 0, 0, 0, 0]
    print(f"{'family':22} {'preset held':>12} {'issue':>7} {'variants':>9} {'user rules held':>16}")
    through_rules: list[tuple[str, str]] = []
    try:
        for family, commands in preset_attacks.FAMILIES.items():
            held = [c for c in commands if preset(c).effect != "allow"]
            issue = [c for c in commands if c in ISSUE]
            ruled = [c for c in commands if broad(c).effect != "allow"]
            through_rules += [(family, c) for c in commands if c not in ruled]
            print(
                f"{family:22} {len(held):>5}/{len(commands):<6} "
                f"{sum(c in held for c in issue):>3}/{len(issue):<3} "
                f"{len(held) - sum(c in held for c in issue):>4}/{len(commands) - len(issue):<4} "
                f"{len(ruled):>9}/{len(commands):<6}"
            )
            for i, n in enumerate((len(held), len(commands), len(issue), len(ruled))):
                totals[i] += n
            if verbose:
                print(
                    "".join(f"    preset let through: {c}\n" for c in commands if c not in held),
                    end="",
                )
        print(
            f"{'all':22} {totals[0]:>5}/{totals[1]:<6} {'':7} {'':9} {totals[3]:>9}/{totals[1]:<6}"
        )
        corpus = {c for cs in preset_attacks.FAMILIES.values() for c in cs}
        print(
            f"\n{len(corpus)} distinct commands; the issue's own examples: {len(ISSUE & corpus)} "
            f"of {len(ISSUE)} (counted in each family holding them: {totals[2]}); "
            f"user rules: {len(rules)} of the form shell:exec:P *"
        )
        print(
            f"\nwith a user's shell:exec:P * rule, these run (the rule trusts P) [{len(through_rules)}]:"
        )
        for family, command in through_rules:
            did = f"  -> {run_in_bwrap(command)}" if "--run" in sys.argv else ""
            print(f"  {family:22} {command}{did}")
    finally:
        deps.close()
        broad_deps.close()


if __name__ == "__main__":
    main()
