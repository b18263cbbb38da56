"""What changes the shell for the commands after it: variables and some builtins.

A command that sets a variable programs read (``PATH=tools ls``), or a builtin that sets
variables, reads code from a file or evaluates text as arithmetic (``read``, ``source``,
``let``, ``[ -v 'a[$(cmd)]' ]``), has a meaning that is not fixed when it is read.
"""

from __future__ import annotations

import re

from co_core.policy.shell.syntax import NotLiteral

# Setting any other variable asks: PATH, HOME, LD_*, BASH_ENV, GIT_*, PYTHON*, IFS, PAGER
# and hundreds more change which program runs or what it runs. An allow-list stays right
# when a program learns a new variable; a deny-list would not.
HARMLESS_VARIABLES = re.compile(
    r"LANG|LANGUAGE|LC_[A-Z]+|TZ|COLUMNS|LINES|TERM|NO_COLOR|FORCE_COLOR|CLICOLOR(_FORCE)?"
)


def check_variable(name: str) -> None:
    if HARMLESS_VARIABLES.fullmatch(name) is None:
        raise NotLiteral(
            f"it sets {name}, which can change which programs run or what they do "
            f"(Co allows setting only locale, time zone and display variables)"
        )


_BUILTIN_REFUSE = {
    "let": "let evaluates arithmetic, which can run commands",
    "declare": "declare sets shell variables",
    "typeset": "typeset sets shell variables",
    "export": "export sets environment variables",
    "local": "local sets shell variables",
    "readonly": "readonly sets shell variables",
    "unset": "unset removes variables or functions",
    "read": "read sets shell variables from its input",
    "mapfile": "mapfile sets shell variables from its input",
    "readarray": "readarray sets shell variables from its input",
    "getopts": "getopts sets shell variables",
    "source": "source runs the commands in a file Co cannot see",
    ".": ". runs the commands in a file Co cannot see",
    "enable": "enable loads or switches off shell builtins",
    "shopt": "shopt changes how the shell reads and expands commands",
    "complete": "complete can run commands",
    "compgen": "compgen can run commands",
    "fc": "fc runs commands from the history",
    "bind": "bind can run commands",
    "alias": "alias changes what a command name means",
}
_SET_SAFE = re.compile(r"[-+][euxv]+|[-+]o|errexit|nounset|pipefail|xtrace|verbose|--")


def check_builtin(words: tuple[str, ...]) -> None:
    """NotLiteral for a builtin that changes variables, options or functions later
    commands use, or that evaluates text as code (``[ -v 'a[$(cmd)]' ]`` runs cmd)."""
    name = words[0]
    if name in _BUILTIN_REFUSE:
        raise NotLiteral(_BUILTIN_REFUSE[name])
    if name == "set" and not all(_SET_SAFE.fullmatch(w) for w in words[1:]):
        raise NotLiteral("set changes the shell's options or arguments for what follows")
    if name == "printf" and words[1:2] and words[1].startswith("-v"):  # -vNAME too
        raise NotLiteral("printf -v sets a shell variable")
    if name in ("test", "[", "[[") and ({"-v", "-R"} & set(words[1:])):
        raise NotLiteral(f"{name} -v looks a variable up, and its subscript can run commands")
    if name == "wait" and "-p" in words[1:]:
        raise NotLiteral("wait -p sets a shell variable")
    if name == "hash" and any(w.startswith("-") and "p" in w for w in words[1:]):
        raise NotLiteral("hash -p changes which program a name runs")
