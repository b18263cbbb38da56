"""The kernel confirms the read-only preset's table, in both sandboxes.

Every command generated from the table (``preset_forms``: each row with each option it
lists, alone, clustered, with attached and separate values, prefixes of its long options,
options after ``--``, operands starting with ``-``, an unlisted option, an operand too
many) goes through the real policy engine with only the preset on, as a
``run_shell_command`` call: a generated form is allowed exactly when the table lists it,
and what is allowed is decided read-only. The listed forms then run read-only in each
sandbox (bubblewrap: Debian's GNU coreutils, sed, grep, findutils, diffutils, git, jq,
ripgrep; Docker: the busybox test image) under ``strace -f``. The test fails when one
opens anything but ``/dev/null`` (or the terminal) for writing, creates, renames, links,
removes, truncates or changes the mode, owner, times or extended attributes of any file,
starts a program its decision did not name, or maps code from a file outside the system's
folders (a shared library from the workspace). On Debian's programs it also fails when
one rejects an option the table lists (the table would name an option the program does not
have). And each program is asked how it reads each option the table lists
(``preset_forms.probes``): whether it takes the next word as the option's value, or no
value at all, naming the option as the table spells it.
"""

from __future__ import annotations

import codecs
import collections
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import preset_attacks
import preset_forms
import pytest
from co_shell.sandbox.base import PATH, SHELL, WORKDIR
from shell_testlib import chown_tree, make_workspace, require_backend, sandbox_for

from co_core.policy import PolicyEngine
from co_core.testing import make_app

BUDGET = 1200  # forms run per sandbox: every option's plain spelling, and a sample of others
CHUNK = 200  # forms per sandbox call
TRACED = "%file,fchmod,fchown,fsetxattr,fremovexattr,ftruncate,mmap"
# what a run must never do (the rest of %file is reading: stat, access, readlink, ...)
CHANGING = (
    "rename|renameat|renameat2|unlink|unlinkat|link|linkat|symlink|symlinkat|mkdir|mkdirat|"
    "rmdir|truncate|ftruncate|chmod|fchmod|fchmodat|chown|fchown|lchown|fchownat|setxattr|"
    "lsetxattr|fsetxattr|removexattr|lremovexattr|fremovexattr|mknod|mknodat|utime|utimes|"
    "utimensat|futimesat|creat"
)
CHANGES = re.compile(rf"^({CHANGING})\(")
# the lines of a trace the checks read (the rest of %file is reading: stat, access, ...)
KEEP = rf"execve|O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND|PROT_EXEC|^({CHANGING})\("
WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
DEVICES = {"/dev/null", "/dev/tty"}  # not files: output thrown away, the (absent) terminal
SYSTEM = ("/usr/", "/lib/", "/lib64/", "/lib32/", "/libx32/", "/etc/ld.so.cache")
OPTION_ERROR = re.compile(
    r"unrecognized option|invalid option|unknown option|illegal option|unknown switch"
    r"|unrecognized argument|wasn't expected"  # git's revision options; rg's (clap)
)
RUNNER = r"""
t=/tmp/co-trace; mkdir -p $t
one() {
  rm -f $t/*
  strace -ff -qq -y -s 4096 -e trace=%(traced)s -e signal=none -o $t/s bash -c "$2" \
    </dev/null >/dev/null 2>/tmp/co-err
  echo "@@form $1 exit $?"
  cat $t/s.* 2>/dev/null | grep -E '%(keep)s'
  grep -iE "option|switch|argument|wasn't expected" /tmp/co-err | head -2 | sed 's/^/@@err /'
}
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    workspace = tmp_path_factory.mktemp("decide")
    (workspace / "x").write_text("x\n")
    app = make_app(
        {"policy": {"presets": ["read-only"]}, "shell": {"sandbox": "none"}}, cwd=workspace
    )
    engine = PolicyEngine.from_app(app, workspace=workspace, audit=False)
    deps = app.make_deps(workspace)
    yield lambda command: engine.decide(
        engine.make_call("run_shell_command", {"cmd": command}, deps)
    )
    deps.close()


GENERATED = preset_forms.generate()


def test_a_form_is_allowed_exactly_when_the_table_lists_it(engine: Any) -> None:
    wrong = []
    for form in GENERATED:
        decision = engine(form.command)
        if decision.allowed != form.listed or (decision.allowed and not decision.read_only):
            wrong.append(f"{form.command!r} ({form.variant}): {decision.effect}, {decision.reason}")
    listed = sum(f.listed for f in GENERATED)
    assert wrong == [], f"{len(wrong)} of {len(GENERATED)}:\n" + "\n".join(wrong[:40])
    assert listed > 1500 and len(GENERATED) - listed > 4000  # the generator covers the table


def _workspace() -> Path:
    workspace = make_workspace()
    (workspace / "x").write_text('{"name": "co", "n": 1}\n')
    (workspace / "y").write_text("y\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "a.txt").write_text("a\n")
    (workspace / "evil.so").write_bytes(b"\x7fELF")  # a library no form may load
    (workspace / "libs").mkdir()  # a real one, which the checks' own test loads
    shutil.copy(_library_of("bash"), workspace / "libs")
    if shutil.which("git"):
        git = ["git", "-C", str(workspace), "-c", "safe.directory=*", "-c", "user.name=co"]
        git += ["-c", "user.email=co@x"]
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
        subprocess.run([*git, "add", "x", "src"], check=True)
        subprocess.run([*git, "commit", "-qm", "one"], check=True)
        subprocess.run([*git, "remote", "add", "origin", "https://example.invalid/x"], check=True)
    chown_tree(workspace)
    return workspace


@pytest.fixture(scope="module", params=["bubblewrap", "docker"])
def ran(request: pytest.FixtureRequest, engine: Any) -> Iterator[tuple[str, dict[int, Any]]]:
    """Each sampled listed form, run read-only under strace in this sandbox."""
    backend = request.param
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (apt install strace)")
    image = require_backend(backend)
    workspace = _workspace()
    sandbox = sandbox_for(backend, workspace, image, timeout=300.0, output_limit=8_000_000)
    forms = preset_forms.sample(GENERATED, BUDGET) + [
        preset_forms.Generated((), True, "(attack corpus)", "benign", text=c)
        for c in preset_attacks.BENIGN
    ]
    try:
        first = {f.command: _program("shell:exec:" + f.command)[0] for f in forms}
        here = _programs_in(sandbox, set(first.values()))
        if backend == "bubblewrap":  # Debian's programs: each row's must be there (.ci/run)
            missing = sorted(set(first.values()) - here)
            assert missing == [], f"the host lacks {missing}: install them as .ci/run does"
        forms = [f for f in forms if first[f.command] in here]  # what runs there
        results = trace(sandbox, [engine_text(engine, form.command) for form in forms])
        yield backend, sandbox, {i: (forms[i], results.get(i)) for i in range(len(forms))}
        assert sorted(p.name for p in workspace.iterdir()) == [".git", "evil.so", "libs", "src", "x", "y"]  # fmt: skip
    finally:
        sandbox.close()
        shutil.rmtree(workspace, ignore_errors=True)


def _programs_in(sandbox: Any, names: set[str]) -> set[str]:
    """The table's programs this sandbox has (the busybox image has no git, jq, rg, ...)."""
    script = "for n in " + " ".join(map(shlex.quote, sorted(names))) + "; do "
    script += 'type "$n" >/dev/null 2>&1 && echo "$n"; done'
    return set(sandbox.run([*SHELL, script], 60.0, read_only=True).output.split())


def trace(sandbox: Any, commands: list[str]) -> dict[int, dict[str, Any]]:
    """Run each command read-only under strace in the sandbox: what the kernel saw."""
    results: dict[int, Any] = {}
    for start in range(0, len(commands), CHUNK):
        chunk = list(enumerate(commands))[start : start + CHUNK]
        script = RUNNER % {"traced": TRACED, "keep": KEEP} + "\n".join(
            f"one {i} {shlex.quote(command)}" for i, command in chunk
        )
        result = sandbox.run([*SHELL, script], 300.0, read_only=True)
        assert not result.timed_out and not result.cut, result.output[-500:]
        results.update(_split(result.output))
    return results


def _library_of(program: str) -> str:
    """A shared library the program loads (the Docker test image copies the host's)."""
    out = subprocess.run(["ldd", shutil.which(program) or program], capture_output=True, text=True)
    found = re.findall(r"=> (/\S+libtinfo\S*|/\S+libc\.so\S*)", out.stdout)
    return found[0]


def engine_text(engine: Any, command: str) -> str:
    """What Co runs for the command (its canonical spelling), once it is allowed."""
    decision = engine(command)
    assert decision.allowed and decision.read_only, (command, decision.reason)
    return decision.key.removeprefix("shell:exec:")


def _split(output: str) -> dict[int, dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    current: dict[str, Any] = {"lines": [], "errors": []}
    for line in output.splitlines():
        head = re.match(r"@@form (\d+) exit (\d+)$", line)
        if head:
            current = {"exit": int(head.group(2)), "lines": [], "errors": []}
            found[int(head.group(1))] = current
        elif line.startswith("@@err "):
            current["errors"].append(line[6:])
        else:  # a form's trace follows its @@form line
            current["lines"].append(line)
    return found


def _strings(line: str) -> list[str]:
    return [
        codecs.escape_decode(s.encode())[0].decode("utf-8", "replace")  # type: ignore[no-untyped-call]
        for s in re.findall(r'"((?:[^"\\]|\\.)*)"', line)
    ]


def _program(key: str) -> list[str]:
    """The argv a part names: its words without the assignments before them."""
    words = shlex.split(key.removeprefix("shell:exec:"))
    while len(words) > 1 and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]
    return words


def _standard(path: str, name: str) -> bool:
    if "/" in name:
        return os.path.normpath(os.path.join(WORKDIR, name)) == os.path.normpath(path)
    return path in {f"{folder}/{name}" for folder in PATH.split(":")} | {"/proc/self/exe"}


def problems(form: Any, trace: dict[str, Any], named: list[list[str]]) -> list[str]:
    wrong = []
    execs = 0
    for line in trace["lines"]:
        strings = _strings(line)
        if line.startswith("execve(") and line.rstrip().endswith("= 0"):
            execs += 1
            argv = strings[1:]
            if execs == 1 and argv[:2] == list(SHELL):
                continue  # the bash -c that runs the form
            if not any(argv == words and _standard(strings[0], words[0]) for words in named):
                wrong.append(f"started {strings[0]} {shlex.join(argv)}")
        elif line.startswith(("open(", "openat(", "openat2(")):
            path = strings[0] if strings else "?"
            if any(f in line for f in WRITE_FLAGS):
                if path not in DEVICES:
                    wrong.append(f"opened {path} for writing: {line[:160]}")
        elif line.startswith("mmap(") and "PROT_EXEC" in line:
            mapped = re.search(r", -?[0-9]+<(.*?)>, ", line)  # -y: the fd's file
            if mapped and not mapped.group(1).startswith(SYSTEM):
                wrong.append(f"loaded code from {mapped.group(1)}")
        elif CHANGES.match(line):
            wrong.append(f"changed a file: {line[:160]}")
    return wrong


def test_what_the_preset_allows_writes_nothing_and_runs_only_what_it_names(
    ran: tuple[str, Any, dict[int, Any]], engine: Any
) -> None:
    backend, _, results = ran
    wrong, counts, option_errors = [], collections.Counter[str](), []
    for form, trace in results.values():
        assert trace is not None, f"{form.command!r} did not run"
        decision = engine(form.command)
        named = [_program(p.key) for p in decision.parts if p.key.startswith("shell:exec:")]
        found = problems(form, trace, named)
        if found:
            wrong.append(f"{form.command!r}: {found[0]} (+{len(found) - 1})")
        counts["run"] += 1
        counts["not installed" if trace["exit"] == 127 else "found"] += 1
        if trace["exit"] != 127 and any(OPTION_ERROR.search(e) for e in trace["errors"]):
            option_errors.append(f"{form.command!r}: {trace['errors'][0]}")
    print(f"\n{backend}: {dict(counts)} forms; option errors: {len(option_errors)}")
    assert wrong == [], f"{backend}: {len(wrong)} forms:\n" + "\n".join(wrong[:30])
    assert counts["not installed"] == 0 and counts["run"] > BUDGET // 2
    if backend == "bubblewrap":  # every form, on Debian's programs (CI installs them)
        assert counts["run"] == BUDGET + len(preset_attacks.BENIGN)
    if backend == "bubblewrap":  # Debian's programs have every option the table lists
        assert option_errors == [], "\n".join(option_errors[:30])


CANARIES = {  # what the checks must see, each done on purpose (and failing: read-only)
    "sort -o out x": "opened out for writing",
    "touch out": "opened out for writing",
    "sed -n 'w out' x": "opened out for writing",
    "mkdir d": "changed a file",
    "ln -s x l": "changed a file",
    "chmod 600 x": "changed a file",
    "rm x": "changed a file",
    "sh -c 'id'": "started",
    "LD_LIBRARY_PATH=/workspace/libs bash -c true": "loaded code from /workspace/libs/",
}


def test_the_checks_see_each_thing_they_look_for(ran: tuple[str, Any, dict[int, Any]]) -> None:
    """Run on purpose, each canary is seen for what it did (a check that cannot fail would
    prove nothing): the decision names only the command's own first program."""
    backend, sandbox, _ = ran
    traces = trace(sandbox, list(CANARIES))
    missed = []
    for i, (command, expected) in enumerate(CANARIES.items()):
        words = shlex.split(command)
        words = words[1:] if "=" in words[0] else words
        found = problems(None, traces[i], [words])
        if not any(expected in problem for problem in found):
            missed.append(f"{command!r}: expected {expected!r}, saw {found}")
    assert missed == [], f"{backend}:\n" + "\n".join(missed)


# busybox's programs refuse most long options the table lists (GNU's), or print their
# usage and stop; its realpath reads every word as a path
REFUSED = r"unrecognized option|invalid option|illegal option|unknown option|^Usage: |No such file"


def test_each_program_reads_each_option_as_the_table_says(
    ran: tuple[str, Any, dict[int, Any]],
) -> None:
    """Asked the program itself: each option the table reads with the next word as its
    value, given none, makes the program say it needs one, and each long option it lists
    as taking none, given one, makes it refuse it; both times naming the option as the
    table spells it (so a listed name that the program takes for an abbreviation of a
    longer one shows). On Debian's programs every probe must agree; busybox's may also
    refuse an option it does not have."""
    backend, sandbox, _ = ran
    probes = preset_forms.probes()
    here = _programs_in(sandbox, {shlex.split(p.command)[0] for p in probes})
    probes = [p for p in probes if shlex.split(p.command)[0] in here]
    said: dict[int, list[str]] = {}
    for start in range(0, len(probes), CHUNK):
        script = "\n".join(
            f"echo '@@probe {i}'; bash -c {shlex.quote(p.command)} </dev/null 2>&1 | head -4"
            for i, p in list(enumerate(probes))[start : start + CHUNK]
        )
        result = sandbox.run([*SHELL, script], 300.0, read_only=True)
        assert not result.timed_out and not result.cut, result.output[-500:]
        current: list[str] = []
        for line in result.output.splitlines():
            head = re.fullmatch(r"@@probe (\d+)", line)
            if head:
                current = said.setdefault(int(head.group(1)), [])
            else:
                current.append(line)
    wrong = []
    for i, probe in enumerate(probes):
        text = "\n".join(said.get(i, []))
        expect = probe.expect if backend == "bubblewrap" else f"{probe.expect}|{REFUSED}"
        if not re.search(expect, text, re.MULTILINE):
            wrong.append(f"{probe.command!r} ({probe.what}): {text[:160]!r}")
    print(f"\n{backend}: {len(probes)} options asked of their programs")
    assert len(probes) > (400 if backend == "bubblewrap" else 100)
    assert wrong == [], f"{backend}: {len(wrong)} of {len(probes)}:\n" + "\n".join(wrong[:30])
