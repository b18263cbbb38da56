"""Presets: named sets of rules a user turns on (``co policy preset read-only``).

A preset's rules sit at the weakest level, ``default``: any rule of your own overrides
them. ``read-only`` allows shell commands that only read: listing, searching, printing
and comparing files, and git's read-only subcommands. Co's program knowledge keeps the
arguments of those programs that write or run something asked (``find -delete``,
``sed -i``, ``sort -o``, ``git -c``, ``rg --pre``): a preset rule never names them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    name: str
    help: str
    commands: tuple[str, ...]  # shell commands, each allowed with any arguments

    @property
    def rules(self) -> list[tuple[str, str]]:
        """(match, effect) of each rule."""
        return [(f"shell:exec:{command} *", "allow") for command in self.commands]


READ_ONLY = Preset(
    "read-only",
    "shell commands that only read: list, search, print, compare; git's read-only commands",
    (
        # files and folders
        "ls", "cat", "head", "tail", "wc", "nl", "tac", "file", "stat", "du", "df", "tree",
        "find", "fd", "grep", "egrep", "fgrep", "rg", "diff", "cmp", "comm", "realpath",
        "readlink", "basename", "dirname", "pwd", "cd", "od", "hexdump", "strings",
        "sha256sum", "sha1sum", "md5sum", "cksum", "base64",
        # text
        "cut", "tr", "sort", "uniq", "paste", "rev", "column", "fold", "fmt", "expand",
        "unexpand", "seq", "numfmt", "expr", "jq", "sed", "awk", "echo", "printf", "true",
        "false", "test", "[",
        # the system
        "which", "type", "whoami", "id", "uname", "date", "env", "xargs",
        # git, reading
        "git status", "git log", "git diff", "git show", "git blame", "git branch",
        "git tag", "git ls-files", "git ls-tree", "git rev-parse", "git describe",
        "git shortlog", "git grep", "git remote", "git stash list", "git cat-file",
    ),
)  # fmt: skip
PRESETS: dict[str, Preset] = {preset.name: preset for preset in (READ_ONLY,)}
