"""git's arguments that run programs, write files or change its configuration.

git runs programs named in its configuration (pagers, diff and merge drivers, filters,
``core.fsmonitor``, aliases starting with ``!``), so whatever sets configuration or
points git at another repository's configuration runs code: ``-c``, ``-C``,
``--git-dir``, ``git config x y``, ``git remote add``. A rule such as
``shell:exec:git *`` covers those only if it names them.
"""

from __future__ import annotations

from co_core.policy.shell.options import Parsed, Syntax, expand, parse

OTHER_CONFIG = "uses another repository, whose configuration can run programs"
GLOBAL_DANGER = {
    "-c": "sets configuration, which can run programs",
    "--config-env": "sets configuration, which can run programs",
    "-C": OTHER_CONFIG,
    "--git-dir": OTHER_CONFIG,
    "--work-tree": OTHER_CONFIG,
    "--exec-path": "changes where git finds the programs it runs",
    "-p": "runs the pager",
    "--paginate": "runs the pager",
}
GLOBAL_VALUES = {"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix"}
GLOBAL_VALUES |= {"--config-env", "--attr-source"}
# Options of any subcommand.
DANGER = {
    "--output": "writes a file",
    "--ext-diff": "runs the diff program named in git's configuration",
    "--textconv": "runs the conversion programs named in git's configuration",
    "--filters": "runs the filter programs named in git's configuration",
    "--exec": "runs a program",
    "--upload-pack": "runs a program",
    "--receive-pack": "runs a program",
    "--template": "copies hooks (programs git runs) from a folder",
    "--open-files-in-pager": "runs a pager",
    "--config": "sets configuration, which can run programs",
}
EXACT = frozenset({"--text", "--filter"})  # real options that are prefixes of dangerous ones
COMMANDS = frozenset(
    """add am annotate apply archive bisect blame branch bundle cat-file check-attr
    check-ignore check-mailmap check-ref-format checkout checkout-index cherry cherry-pick
    clean clone column commit commit-graph commit-tree config count-objects credential
    describe diff diff-files diff-index diff-tree difftool fast-export fast-import fetch
    fetch-pack filter-branch fmt-merge-msg for-each-ref for-each-repo format-patch fsck gc
    get-tar-commit-id grep hash-object help hook index-pack init instaweb interpret-trailers
    log ls-files ls-remote ls-tree mailinfo mailsplit maintenance merge merge-base
    merge-file merge-index merge-tree mergetool mktag mktree mv name-rev notes pack-objects
    pack-refs patch-id prune prune-packed pull push range-diff read-tree rebase reflog
    remote repack replace request-pull rerere reset restore rev-list rev-parse revert rm
    send-email shortlog show show-branch show-index show-ref sparse-checkout stash status
    stripspace submodule switch symbolic-ref tag unpack-file unpack-objects update-index
    update-ref update-server-info var verify-commit verify-pack verify-tag version
    whatchanged worktree write-tree""".split()
)
# Subcommands that always run a program given to them or named in the configuration.
RUNNERS = {
    "difftool": "runs a diff tool",
    "mergetool": "runs a merge tool",
    "filter-branch": "runs the commands given to it",
    "hook": "runs a hook",
    "instaweb": "runs a web server",
    "send-email": "runs a mail program",
}
CONFIG_READS = {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l"}
CONFIG_READS |= {"--get-color", "--get-colorbool"}
CONFIG_NEUTRAL = {"--global", "--system", "--local", "--worktree", "--show-origin"}
CONFIG_NEUTRAL |= {"--show-scope", "--includes", "--no-includes", "-z", "--null", "--name-only"}
CONFIG_WRITES = {"--add", "--unset", "--unset-all", "--replace-all", "--rename-section"}
CONFIG_WRITES |= {"--remove-section", "-e", "--edit"}
BRANCH_READS = {"-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose"}
BRANCH_READS |= {"--show-current", "--contains", "--no-contains", "--merged", "--no-merged"}
BRANCH_READS |= {"--points-at", "--sort", "--format", "--color", "--no-color", "--column"}
BRANCH_READS |= {"--no-column", "-i", "--ignore-case", "--abbrev", "--no-abbrev", "-q"}
BRANCH_VALUES = {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}
BRANCH_VALUES |= {"--sort", "--format"}
TAG_READS = {"-l", "--list", "-n", "--contains", "--no-contains", "--merged", "--no-merged"}
TAG_READS |= {"--points-at", "--sort", "--format", "--color", "--column", "--no-column"}
TAG_READS |= {"-i", "--ignore-case"}
# Subcommands whose first operand says whether they only read.
READ_ONLY_ACTIONS = {
    "stash": {"list", "show"},
    "worktree": {"list"},
    "notes": {"list", "show"},
    "reflog": {"show", "exists"},
    "submodule": {"status", "summary"},
    "remote": {"show", "get-url"},
    "bisect": {"log", "visualize", "view"},
}
CHANGES = {
    "stash": "changes the working tree",
    "worktree": "adds or removes working trees",
    "notes": "changes notes",
    "reflog": "deletes reflog entries",
    "submodule": "changes submodules and their configuration, or runs commands in them",
    "remote": "changes the remotes in git's configuration",
    "bisect": "changes the checked-out commit, or runs a command (bisect run)",
}


def git_findings(words: tuple[str, ...]) -> list[tuple[int, str]]:
    """(word index, what it does) for every argument of a git command that writes files
    outside git's own store, runs a program, or changes git's configuration."""
    found: list[tuple[int, str]] = []
    i = 1
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        name = word.split("=", 1)[0]
        for option in GLOBAL_DANGER:
            same = name == option or (option in ("-c", "-C") and word.startswith(option))
            if same:
                found.append((i, f"{option} {GLOBAL_DANGER[option]}"))
                break
        if name in GLOBAL_VALUES and "=" not in word and name == word:
            i += 1
        i += 1
    if i >= len(words):
        return found
    command = words[i]
    if command not in COMMANDS:
        return [
            *found,
            (i, f"{command} is not a git command Co knows: it may be an alias or a "
                f"git-{command} program, which can run anything"),
        ]  # fmt: skip
    parsed = parse(words, Syntax(), start=i + 1)
    for k, option, _ in parsed.options:
        for full in expand(option, DANGER, EXACT):
            found.append((k, f"{full} {DANGER[full]}"))
        if command == "grep" and option == "-O":
            found.append((k, "-O runs a pager"))
        if command == "clone" and option in ("-u", "-c"):
            found.append((k, f"{option} runs a program or sets configuration that can"))
        if command == "rebase" and option in ("-x", "--exec", "-i", "--interactive"):
            found.append((k, f"{option} runs commands or an editor"))
    found += _subcommand(words, i, command, parsed)
    return found


def _subcommand(
    words: tuple[str, ...], i: int, command: str, parsed: Parsed
) -> list[tuple[int, str]]:
    """The argument that makes this subcommand write or run something (its word index:
    a rule covers it only by naming that word)."""
    names = parsed.names()
    operands = [words[k] for k in parsed.operands]
    if command in RUNNERS:
        return [(i, f"git {command} {RUNNERS[command]}")]
    if command == "config":
        reads = bool(names & CONFIG_READS) or (operands[:1] in (["get"], ["list"]))
        reads = reads or (not names - CONFIG_NEUTRAL and len(operands) == 1)
        culprit = _first_option(parsed, CONFIG_WRITES)
        if culprit is None and not reads:
            culprit = parsed.operands[-1] if parsed.operands else i
        if culprit is not None:
            return [(culprit, "git config changes git's configuration, which can run programs")]
        return []
    if command in ("branch", "tag"):
        allowed, values = (
            (BRANCH_READS, BRANCH_VALUES) if command == "branch" else (TAG_READS, set())
        )
        culprit = next((k for k, n, _ in parsed.options if n not in allowed), None)
        # ``--contains X``: X is the option's value, not a branch to create
        given = {k + 1 for k, n, v in parsed.options if n in values and v is None}
        plain = [k for k in parsed.operands if k not in given]
        if culprit is None and plain and not names & {"-l", "--list"}:
            culprit = plain[0]
        if culprit is not None:
            what = "branches" if command == "branch" else "tags"
            return [(culprit, f"git {command} creates, renames or deletes {what} here")]
        return []
    if command in READ_ONLY_ACTIONS:
        if command == "remote" and not operands:
            return []
        if not operands or operands[0] not in READ_ONLY_ACTIONS[command]:
            culprit = parsed.operands[0] if parsed.operands else i
            return [(culprit, f"git {command} {CHANGES[command]}")]
    return []


def _first_option(parsed: Parsed, names: set[str]) -> int | None:
    return next((k for k, n, _ in parsed.options if n in names), None)
