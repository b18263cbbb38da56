"""What runs is exactly what was decided: Co's decisions against real bash, under strace.

Every command of the attack corpus (``shell_corpus``: here-documents of every delimiter
quoting, every expansion form, loops and assignments over environment names, words that
become options, ``env -S``, arguments that run programs) and generated variants go
through the real policy engine with read-only allow rules, exactly as a
``run_shell_command`` call would (the co-shell resolver included). What the engine allows
then runs in the real sandbox, both of them, as co-shell runs it (``bash -c TEXT``), under
``strace -f -e trace=execve``; the test fails when a program starts that no part of the
decision named: another program, other arguments, a word that became an option, or the
right name found somewhere else than on the standard PATH (a planted ``tools/ls``).
A second test runs what Co re-spelled and what was written side by side: the same
programs must start with the same arguments (Co's reader agrees with bash).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import shell_corpus
from co_shell.sandbox.base import PATH, SHELL, WORKDIR
from shell_testlib import chown_tree, make_workspace, require_backend, sandbox_for

from co_core.policy import PolicyEngine
from co_core.testing import make_app

TRACE_FILE = ".co-strace"
STRACE = [
    "strace", "-f", "-qq", "-v", "-xx", "-s", "65536",
    "-e", "trace=execve", "-e", "signal=none", "-o", f"{WORKDIR}/{TRACE_FILE}",
]  # fmt: skip
PLANTED = "#!/bin/sh\ntouch /workspace/PWNED-planted\n"
GITCONFIG = (
    '[core]\n\tfsmonitor = "touch /workspace/PWNED-git; false"\n\tpager = touch PWNED-pager\n'
)


@pytest.fixture(scope="module", params=["bubblewrap", "docker"])
def bench(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    backend = request.param
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (apt install strace)")
    image = require_backend(backend)
    workspace = make_workspace()
    _plant(workspace)
    home = tmp_path_factory.mktemp(f"co-{backend}")
    saved = {k: os.environ.get(k) for k in ("CO_CONFIG_DIR", "CO_DATA_DIR", "CO_CACHE_DIR")}
    for kind in ("config", "data", "cache"):
        os.environ[f"CO_{kind.upper()}_DIR"] = str(home / kind)
    app = make_app(
        {"shell": {"sandbox": backend}, "policy": {"rules": shell_corpus.RULES}}, cwd=workspace
    )
    engine = PolicyEngine.from_app(app, workspace=workspace, audit=False)
    deps = app.make_deps(workspace)
    sandbox = sandbox_for(backend, workspace, image, timeout=20.0)
    try:
        yield Bench(backend, workspace, engine, deps, sandbox)
    finally:
        sandbox.close()
        deps.close()
        shutil.rmtree(workspace, ignore_errors=True)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _plant(workspace: Path) -> None:
    """What an attack would like to run instead: programs shadowing real ones, a git
    configuration that runs code, a file named like an option, a repository."""
    (workspace / "tools").mkdir()
    for name in ("ls", "cat", "git", "find", "env", "echo"):
        tool = workspace / "tools" / name
        tool.write_text(PLANTED)
        tool.chmod(0o755)
    (workspace / "evil.sh").write_text("touch /workspace/PWNED-env\n")
    (workspace / ".gitconfig").write_text(GITCONFIG)
    (workspace / "x").write_text("x\n")
    (workspace / "-delete").write_text("")
    (workspace / "-exec").write_text("")
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    chown_tree(workspace)


class Bench:
    def __init__(self, backend: str, workspace: Path, engine: Any, deps: Any, sandbox: Any):
        self.backend, self.workspace, self.engine = backend, workspace, engine
        self.deps, self.sandbox = deps, sandbox

    def decide(self, command: str) -> tuple[Any, str]:
        """The decision for a ``run_shell_command`` call, and the text that would run."""
        call = self.engine.make_call("run_shell_command", {"cmd": command}, self.deps)
        return self.engine.decide(call), str(call.args["cmd"])

    def trace(self, command: str) -> list[tuple[str, list[str]]]:
        """Run ``bash -c command`` in the sandbox: every program started, with its argv."""
        trace = self.workspace / TRACE_FILE
        trace.unlink(missing_ok=True)
        self.sandbox.run([*STRACE, *SHELL, command], 20.0)
        text = trace.read_text(errors="replace") if trace.exists() else ""
        trace.unlink(missing_ok=True)
        started = _execs(text)
        assert started and started[0][1][:2] == list(SHELL), f"strace saw no bash: {text[:300]}"
        return started[1:]  # the first is bash itself

    def marks(self) -> list[str]:
        return sorted(p.name for p in self.workspace.iterdir() if "PWNED" in p.name)


_EXECVE = re.compile(
    r'^(\d+) +(?:<\.\.\. execve resumed>|execve\("((?:\\x[0-9a-f]{2})*)", \[(.*?)\])'
)


def _hex(text: str) -> str:
    return bytes.fromhex(text.replace("\\x", "")).decode("utf-8", "replace")


def _execs(trace: str) -> list[tuple[str, list[str]]]:
    """(program path, argv) of every execve that succeeded, in order."""
    pending: dict[str, tuple[str, list[str]]] = {}
    done = []
    for line in trace.splitlines():
        found = _EXECVE.match(line)
        if found is None:
            continue
        pid, path, argv = found.groups()
        if path is not None:
            args = [_hex(a) for a in re.findall(r'"((?:\\x[0-9a-f]{2})*)"', argv or "")]
            pending[pid] = (_hex(path), args)
        if line.rstrip().endswith("= 0") and pid in pending:
            done.append(pending.pop(pid))
    return done


def _named(decision: Any) -> list[list[str]]:
    """The argv of every program the decision names (its ``shell:exec:`` parts)."""
    keys = [p.key for p in decision.parts] or [decision.key]
    named = []
    for key in keys:
        if key.startswith("shell:exec:"):
            try:
                named.append(shlex.split(key[len("shell:exec:") :]))
            except ValueError:
                continue
    return named


def _covers(words: list[str], argv: list[str]) -> bool:
    """Do these decided words start exactly this argv? A pattern word (``*``, ``?``, or
    find's ``{}``) stands for itself or for one or more names, none of them an option."""
    while words and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", words[0]) and len(words) > 1:
        words = words[1:]  # FOO=1 cmd: the environment, not the program's arguments
    return _match(words, argv)


def _match(words: list[str], argv: list[str]) -> bool:
    if not words:
        return not argv
    head, rest = words[0], words[1:]
    if argv[:1] == [head] and _match(rest, argv[1:]):
        return True
    if head != "{}" and not any(c in head for c in "*?"):
        return False
    for n in range(1, len(argv) + 1):
        names = argv[:n]
        if any(a.startswith("-") for a in names):
            return False
        if all(head == "{}" or fnmatch.fnmatchcase(a, head) for a in names):
            if _match(rest, argv[n:]):
                return True
    return False


def _standard(path: str, name: str) -> bool:
    """Is ``path`` where the sandbox's PATH finds ``name`` (or ``name`` itself, a path)?"""
    if "/" in name:
        return os.path.normpath(os.path.join(WORKDIR, name)) == os.path.normpath(path)
    # busybox (the Docker test image) starts its own applets again through /proc/self/exe
    return path in {f"{folder}/{name}" for folder in PATH.split(":")} | {"/proc/self/exe"}


def unnamed(decision: Any, started: list[tuple[str, list[str]]]) -> list[str]:
    named = _named(decision)
    wrong = []
    for path, argv in started:
        ok = any(
            _covers(words, argv) and _standard(path, argv[0] if argv else "") for words in named
        )
        if not ok:
            wrong.append(f"{path} {shlex.join(argv)}")
    return wrong


def attacks() -> list[str]:
    found = [c for family in shell_corpus.FAMILIES.values() for c in family]
    return found + shell_corpus.generated(120)


def benign() -> list[str]:
    return shell_corpus.BENIGN + shell_corpus.benign_generated(40)


def test_nothing_starts_that_the_decision_did_not_name(bench: Bench) -> None:
    problems = []
    ran = 0
    for command in attacks() + benign():
        decision, text = bench.decide(command)
        if decision.effect != "allow":
            continue
        ran += 1
        wrong = unnamed(decision, bench.trace(text))
        if wrong:
            problems.append(f"{command!r} (ran {text!r}) started {wrong[0]} (+{len(wrong) - 1})")
    assert problems == [], f"{len(problems)} commands:\n" + "\n".join(problems)
    assert bench.marks() == []
    assert ran >= len(shell_corpus.BENIGN)  # the read-only commands did run


def test_what_co_runs_starts_what_was_written(bench: Bench) -> None:
    """Co's reader agrees with bash: its re-spelling starts the same programs with the
    same arguments as the text as written (checked where both are allowed to run)."""
    if bench.backend != "bubblewrap":
        pytest.skip("one sandbox is enough to compare two spellings")
    differ = []
    for command in benign():
        decision, text = bench.decide(command)
        assert decision.effect == "allow", (command, decision.reason)
        if text == command:
            continue
        written, respelled = bench.trace(command), bench.trace(text)
        if sorted(map(str, written)) != sorted(map(str, respelled)):
            differ.append(f"{command!r} -> {text!r}: {written} != {respelled}")
    assert differ == [], "\n".join(differ)
