"""Commands inside commands: what a wrapper, a shell or ``find -exec`` runs.

``sudo``, ``env``, ``timeout``, ``xargs``, … run the command in their operands; ``bash
-c``, ``sh -c``, ``eval``, ``trap`` and ``watch`` run a script; ``find -exec`` runs the
words up to ``;`` or ``+``. Each wrapper's options are data: one Co does not know asks,
since it could take a value and move where the command starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from co_core.policy.shell.options import Syntax, expand, parse
from co_core.policy.shell.state import check_variable
from co_core.policy.shell.syntax import NotLiteral


@dataclass(frozen=True)
class Inner:
    """Another command inside this one's words ``[start:end]``. ``shell``: the words,
    joined by spaces, are a script that shell reads (``bash``, or ``sh`` for POSIX sh)."""

    start: int
    end: int
    shell: str | None = None
    runtime_args: bool = False  # more arguments are added when it runs (xargs)
    builtins: bool = False  # a bash builtin may run here (``command``, ``builtin``)


@dataclass(frozen=True)
class Wrapper:
    syntax: Syntax
    flags: str = ""  # its short options without a value; any other option asks
    long_flags: frozenset[str] = frozenset()
    skip: int = 0  # operands before the command (timeout's DURATION, chroot's NEWROOT)
    assignments: bool = False  # NAME=value operands set the command's environment
    refuse: Mapping[str, str] = field(default_factory=dict)  # option -> why it asks
    shell: str | None = None  # ``watch``: the operands are joined and given to sh -c
    runtime_args: bool = False
    builtins: bool = False
    variables: frozenset[str] = frozenset()  # options whose value names a variable it sets


def _w(
    values: str = "", flags: str = "", long_values: str = "", long_flags: str = "", **kw: Any
) -> Wrapper:
    syntax = Syntax(values=values, long_values=frozenset(long_values.split()), permute=False)
    return Wrapper(syntax, flags, frozenset(long_flags.split()), **kw)


WRAPPERS: dict[str, Wrapper] = {
    "sudo": _w(
        "ughpCDrtRTU",
        "AbEHKklnPSVv",
        "--user --group --host --prompt --close-from --chdir --chroot --role --type "
        "--command-timeout --other-user",
        "--askpass --background --bell --preserve-env --set-home --non-interactive --stdin "
        "--reset-timestamp --remove-timestamp --validate --list --version --help "
        "--preserve-groups",
        assignments=True,
        refuse={
            "-s": "sudo -s runs the command through a shell",
            "-i": "sudo -i runs the command through a login shell",
            "-e": "sudo -e runs an editor",
            "--shell": "sudo --shell runs the command through a shell",
            "--login": "sudo --login runs the command through a login shell",
            "--edit": "sudo --edit runs an editor",
        },
    ),
    "doas": _w("uC", "nL", refuse={"-s": "doas -s runs a shell"}),
    "env": _w(
        "uC",
        "i0v",
        "--unset --chdir",
        "--ignore-environment --null --debug --help --version --ignore-signal "
        "--default-signal --block-signal --list-signal-handling",
        assignments=True,
        refuse={
            "-S": "env -S splits its argument into words itself, when it runs",
            "--split-string": "env --split-string splits its argument into words itself",
        },
    ),
    "nohup": _w(),
    "nice": _w("n", "0123456789", "--adjustment"),
    "ionice": _w("cnpPu", "t", "--class --classdata --pid --pgid --uid", "--ignore"),
    "timeout": _w(
        "sk", "v", "--signal --kill-after", "--preserve-status --foreground --verbose", skip=1
    ),
    "time": _w("fo", "apqvV", "--format --output", "--append --portability --quiet --verbose"),
    "command": _w(flags="pvV", builtins=True),
    "builtin": _w(builtins=True),
    "exec": _w("a", "cl"),
    "xargs": _w(
        "adEILnPs",
        "0oprtxeil",
        "--arg-file --delimiter --max-args --max-procs --max-chars --process-slot-var",
        "--null --open-tty --interactive --no-run-if-empty --verbose --exit --show-limits "
        "--replace --eof --max-lines",
        runtime_args=True,
        variables=frozenset({"--process-slot-var"}),
    ),
    "stdbuf": _w("ioe", "", "--input --output --error"),
    "setsid": _w(flags="cfw", long_flags="--ctty --fork --wait"),
    "chroot": _w(long_values="", long_flags="--skip-chdir --userspec --groups", skip=1),
    "unbuffer": _w(flags="p"),
    "watch": _w(
        "nq",
        "bcegptwxd",
        "--interval --equexit",
        "--beep --color --errexit --chgexit --precise --no-title --no-wrap --exec --differences",
        shell="sh",
    ),
    "strace": _w("abeEIoOpPsSuUX", "cCdDfFhiqrtTvVwxyYzZk", "--output"),
    "flock": _w(
        "wE",
        "sxunoFhV",
        "--wait --timeout --conflict-exit-code",
        refuse={"-c": "flock -c runs a command string", "--command": "flock -c runs a string"},
        skip=1,
    ),
    "taskset": _w(flags="ac", skip=1),
    "busybox": _w(),
}
SHELLS = {"bash": "bash", "sh": "sh", "dash": "sh"}
OTHER_SHELLS = {"zsh", "ksh", "ash", "mksh", "fish", "tcsh", "csh", "yash", "pwsh"}
SHELL_SAFE_OPTIONS = {"--norc", "--noprofile"}
SHELL_SAFE_O = {"errexit", "nounset", "pipefail", "xtrace", "verbose", "noglob"}
SHELL_REFUSE = {
    "-l": "a login shell first runs ~/.profile and other start-up files Co cannot see",
    "--login": "a login shell first runs ~/.profile and other start-up files Co cannot see",
    "-i": "an interactive shell first runs ~/.bashrc, which Co cannot see",
    "--rcfile": "it first runs a start-up file Co cannot see",
    "--init-file": "it first runs a start-up file Co cannot see",
}


def base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def inner_commands(words: tuple[str, ...]) -> list[Inner]:
    """Every command hidden in these words, or NotLiteral when which one is unclear."""
    name = base(words[0])
    if name in WRAPPERS:
        found = _wrapped(name, words)
        return [] if found is None else [found]
    if name in SHELLS:
        return [_shell_script(name, words)]
    if name in OTHER_SHELLS:
        raise NotLiteral(f"{name} reads its script with rules of its own, which Co does not read")
    if name == "eval":
        return [Inner(1, len(words), "bash")] if len(words) > 1 else []
    if name == "trap":
        return _trap(words)
    if name == "find":
        return _find_exec(words)
    return []


def _wrapped(name: str, words: tuple[str, ...]) -> Inner | None:
    spec = WRAPPERS[name]
    parsed = parse(words, spec.syntax, known=spec.long_flags)  # --ch=DIR is --chdir=DIR
    for i, option, value in parsed.options:
        option = _known_option(name, words[i], option, spec)
        if option in spec.refuse:
            raise NotLiteral(spec.refuse[option])
        if option in spec.variables and value is not None:
            check_variable(value)  # xargs --process-slot-var=LD_PRELOAD sets it
    operands = parsed.operands[spec.skip :]
    while spec.assignments and operands and "=" in words[operands[0]]:
        check_variable(words[operands[0]].split("=", 1)[0])
        operands = operands[1:]
    if not operands:
        return None
    shell = spec.shell
    if name == "watch" and parsed.names() & {"-x", "--exec"}:
        shell = None
    return Inner(operands[0], len(words), shell, spec.runtime_args, spec.builtins)


def _known_option(name: str, word: str, option: str, spec: Wrapper) -> str:
    """The option as its full name; NotLiteral for one Co does not know (it might take a
    value, and then the command would start elsewhere than Co thinks)."""
    if not option.startswith("--"):
        if option[1:] in spec.flags or option[1:] in spec.syntax.values or option in spec.refuse:
            return option
    else:
        known = [*spec.long_flags, *spec.syntax.long_values, *spec.refuse]
        found = expand(option, known)
        if len(found) == 1:
            return found[0]
        if any(f in spec.refuse for f in found):
            return next(f for f in found if f in spec.refuse)
    raise NotLiteral(f"Co cannot tell which command `{name} {word}` runs")


def _shell_script(name: str, words: tuple[str, ...]) -> Inner:
    """``bash -c SCRIPT``: the options bash reads before its script, then the script."""
    i, command_mode = 1, False
    while i < len(words):
        word = words[i]
        if word in ("--", "-"):
            i += 1
            break
        if not word.startswith(("-", "+")) or len(word) == 1:
            break
        if word in SHELL_REFUSE:
            raise NotLiteral(f"{name} {word}: {SHELL_REFUSE[word]}")
        i += 1
        if word.startswith("--"):
            if word in SHELL_SAFE_OPTIONS:
                continue
            raise NotLiteral(f"{name} {word}: an option Co does not read")
        letters = word[1:]
        for letter in letters:
            if f"-{letter}" in SHELL_REFUSE:
                raise NotLiteral(f"{name} {word}: {SHELL_REFUSE['-' + letter]}")
            if letter not in "euxvnco":
                raise NotLiteral(f"{name} {word}: an option Co does not read")
        command_mode = command_mode or (word[0] == "-" and "c" in letters)
        for _ in range(letters.count("o")):
            if i >= len(words) or words[i] not in SHELL_SAFE_O:
                raise NotLiteral(f"{name} {word}: an option Co does not read")
            i += 1
    if not command_mode:
        if i < len(words):
            raise NotLiteral(f"{name} runs the script {words[i]}, which Co cannot see")
        raise NotLiteral(f"{name} reads commands from its input, which Co cannot see")
    if i >= len(words):
        raise NotLiteral(f"{name} -c without a command")
    # ``bash -c SCRIPT NAME ARGS…``: the script sees NAME and ARGS only through $0, $1, …,
    # which its own reading refuses, so they are plain words here.
    return Inner(i, i + 1, SHELLS[name])


def _trap(words: tuple[str, ...]) -> list[Inner]:
    args = list(words[1:])
    start = 1
    if args and args[0] == "--":
        args, start = args[1:], 2
    if len(args) < 2 or args[0].startswith("-"):
        return []
    return [Inner(start, start + 1, "bash")]


FIND_EXEC = {"-exec", "-execdir", "-ok", "-okdir"}


def _find_exec(words: tuple[str, ...]) -> list[Inner]:
    found, i = [], 1
    while i < len(words):
        if words[i] in FIND_EXEC:
            end = i + 1
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            if end > i + 1:
                found.append(Inner(i + 1, end))
            i = end
        i += 1
    return found
