"""The read-only preset's table: every command it runs without asking, form by form.

Each row is one program (or git subcommand) with the options it may take, spelled exactly
as its own option reader reads them, what each value is and what each operand is. No
option listed here writes a file, runs a program or sets the environment, in GNU's
programs or in busybox's; operands are files the program reads, or text. Anything else
asks (:mod:`co_core.policy.shell.forms` says why). Interpreters are left out: awk, sed
scripts beyond printing lines, xargs, env running a program, printf -v, find -exec.

docs/policy.md prints this table (``uv run python -m co_core.policy.read_only``), and
``tests/test_preset_kernel.py`` runs every form it generates from it under strace, in
both sandboxes.
"""

from __future__ import annotations

from co_core.policy.shell import forms
from co_core.policy.shell.forms import Form, form

_CHECKSUM = ["-b --binary", "-t --text", "-c --check", "--tag", "-z --zero", "--quiet",
             "--status", "--strict", "-w --warn", "--ignore-missing"]  # fmt: skip
_GREP = [
    "-i --ignore-case", "-v --invert-match", "-w --word-regexp", "-x --line-regexp",
    "-c --count", "-l --files-with-matches", "-L --files-without-match",
    "-o --only-matching", "-q --quiet --silent", "-s --no-messages", "-n --line-number",
    "-h --no-filename", "-H --with-filename", "-b --byte-offset", "-r --recursive",
    "-R --dereference-recursive", "-z --null-data", "-Z --null", "-a --text", "-I",
    "-F --fixed-strings", "-E --extended-regexp", "-G --basic-regexp", "-P --perl-regexp",
    "-T --initial-tab", "-e --regexp PATTERN", "-f --file FILE", "-m --max-count N",
    "-A --after-context N", "-B --before-context N", "-C --context N", "--color[=WHEN]",
    "--colour[=WHEN]", "--include GLOB", "--exclude GLOB", "--exclude-dir GLOB",
    "--label TEXT", "--line-buffered",
]  # fmt: skip
_GIT_DIFF = [
    "-p --patch", "-u", "-s --no-patch", "--stat", "--shortstat", "--numstat",
    "--name-only", "--name-status", "--raw", "--summary", "--no-color", "--no-renames",
    "--ignore-all-space", "--ignore-space-change", "--word-diff", "--minimal",
    "--diff-filter=TYPE", "--unified[=N]", "-U[N]", "--abbrev[=N]", "-R",
]  # fmt: skip
_GIT_LOG = [
    *_GIT_DIFF, "--oneline", "--graph", "--all", "--decorate[=WORD]", "--no-decorate", "--reverse", "--follow", "--first-parent", "--merges", "--no-merges",
    "--abbrev-commit", "--no-abbrev-commit", "--date-order", "--topo-order", "--full-history",
    "-n N", "--max-count=N", "--skip=N", "--since=DATE", "--after=DATE", "--until=DATE",
    "--before=DATE", "--author=PATTERN", "--committer=PATTERN", "--grep=PATTERN",
    "-i --regexp-ignore-case", "--format=FORMAT", "--pretty[=FORMAT]",
    "--date=WORD", "-S TEXT", "-G PATTERN", "--branches", "--tags", "--remotes",
]  # fmt: skip

ROWS: tuple[Form, ...] = (
    # -- files and folders ---------------------------------------------------------------
    form("ls", [
        "-1", "-a --all", "-A --almost-all", "-C", "-x", "-d --directory", "-L --dereference",
        "-H", "-R --recursive", "-F", "--classify[=WHEN]", "-p", "-l", "-i --inode",
        "-n --numeric-uid-gid", "-s --size", "-h --human-readable", "-S", "-X", "-v", "-t",
        "-r --reverse", "-c", "-u", "-g", "-o", "-G --no-group", "-k", "-Q --quote-name",
        "-m", "-q", "-b --escape", "-U", "-B --ignore-backups", "--full-time", "--si",
        "--group-directories-first", "--color[=WHEN]", "-w --width COLS",
        "-I --ignore GLOB", "--hide GLOB", "--sort WORD", "--time WORD", "--time-style WORD",
        "--format WORD", "--indicator-style WORD", "--quoting-style WORD",
        "--block-size SIZE", "--author", "--literal",
    ], "[PATH...]", what="lists folders"),
    form("cat", [
        "-A --show-all", "-b --number-nonblank", "-e", "-E --show-ends", "-n --number",
        "-s --squeeze-blank", "-t", "-T --show-tabs", "-u", "-v --show-nonprinting",
    ], "[FILE...]", what="prints files"),
    form("head", [
        "-n --lines SIZE", "-c --bytes SIZE", "-q --quiet --silent", "-v --verbose",
        "-z --zero-terminated",
    ], "[FILE...]", numeric="first", what="prints the first lines"),
    form("tail", [
        "-n --lines SIZE", "-c --bytes SIZE", "-q --quiet --silent", "-v --verbose",
        "-z --zero-terminated",
    ], "[FILE...]", numeric="first", plus=True,
        what="prints the last lines (never -f, nor +5f: it would not end)"),
    form("wc", [
        "-c --bytes", "-m --chars", "-l --lines", "-w --words", "-L --max-line-length",
    ], "[FILE...]", what="counts lines, words, bytes"),
    form("nl", [
        "-b --body-numbering WORD", "-i --line-increment N", "-n --number-format WORD",
        "-s --number-separator SEP", "-v --starting-line-number N", "-w --number-width N",
        "-p --no-renumber",
    ], "[FILE...]", what="numbers lines"),
    form("tac", ["-b --before", "-r --regex", "-s --separator SEP"], "[FILE...]",
         what="prints files last line first"),
    form("stat", [
        "-L --dereference", "-f --file-system", "-t --terse", "-c --format FORMAT",
        "--printf FORMAT",
    ], "PATH...", what="shows file details"),
    form("du", [
        "-a --all", "-b --bytes", "-c --total", "-h --human-readable", "-k", "-m",
        "-s --summarize", "-x --one-file-system", "-L --dereference", "-H", "-l --count-links",
        "-S --separate-dirs", "-d --max-depth N", "--apparent-size", "--si",
        "--exclude GLOB",
    ], "[PATH...]", what="shows disk use"),
    form("df", [
        "-h --human-readable", "-H --si", "-T --print-type", "-i --inodes", "-k",
        "-P --portability", "-a --all", "-l --local", "--total", "-t --type TYPE",
        "-x --exclude-type TYPE",
    ], "[PATH...]", what="shows free space"),
    form("file", [
        "-b --brief", "-i --mime", "--mime-type", "--mime-encoding", "-L --dereference",
        "-h --no-dereference", "-k --keep-going", "-N --no-pad", "-0 --print0", "-r --raw",
        "-E", "-F --separator SEP", "-f --files-from FILE",
    ], "[PATH...]", what="names file types (never -z: it runs decompressors; never -C)"),
    form("find", [
        "-name GLOB", "-iname GLOB", "-path GLOB", "-ipath GLOB", "-wholename GLOB",
        "-iwholename GLOB", "-lname GLOB", "-ilname GLOB", "-regex PATTERN",
        "-iregex PATTERN", "-regextype WORD", "-type TYPE", "-xtype TYPE", "-size SIZE",
        "-newer FILE", "-anewer FILE", "-cnewer FILE", "-newermt DATE", "-mtime N",
        "-mmin N", "-atime N", "-amin N", "-ctime N", "-cmin N", "-user NAME",
        "-group NAME", "-uid N", "-gid N", "-perm TEXT", "-links N", "-inum N",
        "-samefile FILE", "-maxdepth N", "-mindepth N", "-printf FORMAT",
    ], "[PATH...]", style="find", operators=(
        "-empty -readable -writable -executable -nouser -nogroup -true -false -print "
        "-print0 -ls -prune -quit -depth -xdev -mount -follow -noleaf -daystart "
        "-ignore_readdir_race -not -a -and -o -or ! ( ) ,"
    ), what="finds files (never -exec, -ok, -delete, -fprint, -fls)"),
    form("grep", _GREP, "PATTERN [FILE...]", instead="-e --regexp -f --file",
         what="searches files"),
    form("rg", [
        "-i --ignore-case", "-s --case-sensitive", "-S --smart-case", "-v --invert-match",
        "-w --word-regexp", "-x --line-regexp", "-F --fixed-strings", "-c --count",
        "--count-matches", "-l --files-with-matches", "--files-without-match",
        "-o --only-matching", "-n --line-number", "-N --no-line-number",
        "-H --with-filename", "-I --no-filename", "--no-heading", "--heading",
        "-u --unrestricted", "--hidden", "--no-ignore", "--no-ignore-vcs", "-L --follow",
        "--files", "--json", "-0 --null", "-P --pcre2", "-U --multiline", "--vimgrep",
        "-q --quiet", "--trim", "-b --byte-offset", "--column", "--stats", "--type-list",
        "-e --regexp PATTERN", "-f --file FILE", "-g --glob GLOB", "--iglob GLOB",
        "-t --type TYPE", "-T --type-not TYPE", "-A --after-context N",
        "-B --before-context N", "-C --context N", "-m --max-count N", "--max-depth N",
        "--max-filesize SIZE", "--color WHEN", "--sort WORD", "--sortr WORD",
        "-M --max-columns N", "-j --threads N", "-r --replace TEXT",
    ], "[PATTERN] [PATH...]", instead="-e --regexp -f --file",
        what="searches files (never --pre, -z, --hostname-bin)"),
    form("diff", [
        "-i --ignore-case", "-E --ignore-tab-expansion", "-Z --ignore-trailing-space",
        "-b --ignore-space-change", "-w --ignore-all-space", "-B --ignore-blank-lines",
        "--strip-trailing-cr", "-a --text", "-q --brief", "-s --report-identical-files",
        "-r --recursive", "-N --new-file", "-y --side-by-side", "-t --expand-tabs",
        "-T --initial-tab", "-u", "-c", "-d --minimal", "--suppress-common-lines",
        "--no-dereference", "--color[=WHEN]", "-U N", "--unified[=N]", "-C N", "--context[=N]",
        "-W --width N", "-x --exclude GLOB", "-X --exclude-from FILE",
        "-S --starting-file FILE", "-I --ignore-matching-lines PATTERN",
        "-F --show-function-line PATTERN", "-L --label TEXT",
    ], "PATH PATH", what="compares files (never -l: it runs pr)"),
    form("cmp", [
        "-b --print-bytes", "-l --verbose", "-s --quiet --silent", "-i --ignore-initial SIZE",
        "-n --bytes SIZE",
    ], "FILE [FILE] [N] [N]", what="compares files byte by byte"),
    form("comm", [
        "-1", "-2", "-3", "--check-order", "--nocheck-order", "--output-delimiter SEP",
        "-z --zero-terminated", "--total",
    ], "FILE FILE", what="compares sorted files"),
    form("realpath", [
        "-e --canonicalize-existing", "-m --canonicalize-missing", "-L --logical",
        "-P --physical", "-q --quiet", "-s --strip --no-symlinks", "-z --zero",
        "--relative-to DIR", "--relative-base DIR",
    ], "PATH...", what="prints absolute paths"),
    form("readlink", [
        "-f --canonicalize", "-e --canonicalize-existing", "-m --canonicalize-missing",
        "-n --no-newline", "-q --quiet", "-s --silent", "-v --verbose", "-z --zero",
    ], "PATH...", what="prints where links point"),
    form("basename", ["-a --multiple", "-s --suffix TEXT", "-z --zero"], "TEXT [TEXT...]",
         style="getopt+", what="strips folders from names"),
    form("dirname", ["-z --zero"], "TEXT...", what="strips the last part of names"),
    form("od", [
        "-A --address-radix RADIX", "-j --skip-bytes SIZE", "-N --read-bytes SIZE",
        "-t --format TYPE", "-v --output-duplicates", "-w[COLS]", "--width[=COLS]", "-a",
        "-b", "-c", "-d", "-f", "-i", "-l", "-o", "-s", "-x",
    ], "[FILE...]", what="dumps bytes"),
    form("hexdump", [
        "-b", "-c", "-C --canonical", "-d", "-o", "-x", "-v --no-squeezing",
        "-e --format FORMAT", "-n --length SIZE", "-s --skip SIZE",
    ], "[FILE...]", what="dumps bytes"),
    *(form(name, _CHECKSUM, "[FILE...]", what="prints or checks checksums")
      for name in ("sha256sum", "sha1sum", "sha512sum", "md5sum")),
    form("cksum", [], "[FILE...]", what="prints checksums"),
    form("base64", ["-d --decode", "-i --ignore-garbage", "-w --wrap COLS"], "[FILE]",
         what="encodes or decodes base64"),
    # -- text ----------------------------------------------------------------------------
    form("cut", [
        "-b --bytes LIST", "-c --characters LIST", "-f --fields LIST", "-d --delimiter SEP",
        "-s --only-delimited", "--complement", "-z --zero-terminated",
        "--output-delimiter SEP", "-n",
    ], "[FILE...]", what="prints parts of lines"),
    form("tr", [
        "-c -C --complement", "-d --delete", "-s --squeeze-repeats", "-t --truncate-set1",
    ], "TEXT [TEXT]", style="getopt+", what="changes characters of its input"),
    form("sort", [
        "-b --ignore-leading-blanks", "-d --dictionary-order", "-f --ignore-case",
        "-g --general-numeric-sort", "-i --ignore-nonprinting", "-M --month-sort",
        "-h --human-numeric-sort", "-n --numeric-sort", "-R --random-sort", "-r --reverse",
        "-V --version-sort", "-c", "--check[=WORD]", "-C", "-m --merge", "-s --stable", "-u --unique",
        "-z --zero-terminated", "-k --key KEY", "-t --field-separator SEP",
    ], "[FILE...]", what="sorts lines (never -o, -T, --compress-program)"),
    form("uniq", [
        "-c --count", "-d --repeated", "-u --unique", "-i --ignore-case",
        "-z --zero-terminated", "-f --skip-fields N", "-s --skip-chars N",
        "-w --check-chars N",
    ], "[FILE]", what="drops repeated lines (one input; a second name would be its output)"),
    form("paste", ["-d --delimiters SEP", "-s --serial", "-z --zero-terminated"],
         "[FILE...]", what="joins lines of files"),
    form("rev", [], "[FILE...]", what="reverses lines"),
    form("column", [
        "-t --table", "-s --separator SEP", "-o --output-separator SEP",
        "-c --output-width COLS", "-x --fillrows",
    ], "[FILE...]", what="lines up columns"),
    form("fold", ["-b --bytes", "-s --spaces", "-w --width COLS"], "[FILE...]",
         what="wraps lines"),
    form("fmt", [
        "-w --width COLS", "-s --split-only", "-u --uniform-spacing", "-c --crown-margin",
        "-t --tagged-paragraph", "-p --prefix TEXT", "-g --goal COLS",
    ], "[FILE...]", what="fills paragraphs"),
    form("expand", ["-i --initial", "-t --tabs LIST"], "[FILE...]", what="tabs to spaces"),
    form("unexpand", ["-a --all", "--first-only", "-t --tabs LIST"], "[FILE...]",
         what="spaces to tabs"),
    form("seq", ["-f --format FORMAT", "-s --separator SEP", "-w --equal-width"],
         "N [N] [N]", style="getopt+", what="prints numbers"),
    form("numfmt", [
        "--from WORD", "--to WORD", "--from-unit N", "--to-unit N", "--suffix TEXT",
        "--padding N", "--round WORD", "--format FORMAT", "--field LIST",
        "-d --delimiter SEP", "--grouping", "-z --zero-terminated",
    ], "[TEXT...]", what="formats numbers"),
    form("jq", [
        "-r --raw-output", "-j --join-output", "-c --compact-output", "-n --null-input",
        "-s --slurp", "-e --exit-status", "-S --sort-keys", "-C --color-output",
        "-M --monochrome-output", "-a --ascii-output", "--tab", "--indent N",
        "-R --raw-input", "--seq", "--stream", "--arg NAME TEXT", "--argjson NAME JSON",
        "--slurpfile NAME FILE", "--rawfile NAME FILE",
    ], "FILTER [FILE...]", style="jq", what="reads JSON"),
    form("sed", [
        "-n --quiet --silent", "-e --expression SEDPRINT", "-s --separate",
        "-z --null-data", "-u --unbuffered",
    ], "SEDPRINT [FILE...]", instead="-e --expression", name="sed (print lines)",
        what="prints lines by number (1p, 2,5p, $p): no other sed script"),
    form("expr", style="words", what="evaluates an expression (every word is text)"),
    form("echo", style="words", what="prints its words"),
    form("printf", [], "TEXT [TEXT...]", style="builtin",
         what="prints formatted text (never -v: it sets a variable)"),
    form("true", style="words", what="does nothing"),
    form("false", style="words", what="does nothing, unsuccessfully"),
    *(form(name, style="test", what="tests files and strings (never -v, -R)", operators=(
        "-a -b -c -d -e -f -g -h -k -p -r -s -t -u -w -x -G -L -N -O -S -z -n -o "
        "-eq -ne -lt -le -gt -ge -nt -ot -ef"
    )) for name in ("test", "[")),
    # -- the system ----------------------------------------------------------------------
    form("pwd", ["-L", "-P"], style="builtin", what="prints the current folder"),
    form("cd", ["-L", "-P"], "[DIR]", style="builtin",
         what="changes folder for the rest of the command"),
    form("type", ["-a", "-f", "-p", "-P", "-t"], "NAME...", style="builtin",
         what="says what a command name is"),
    form("which", ["-a"], "NAME...", what="finds programs on PATH"),
    form("whoami", what="prints the user name"),
    form("id", [
        "-u --user", "-g --group", "-G --groups", "-n --name", "-r --real", "-z --zero",
    ], "[NAME]", what="prints user and group ids"),
    form("uname", [
        "-a --all", "-s --kernel-name", "-n --nodename", "-r --kernel-release",
        "-v --kernel-version", "-m --machine", "-p --processor", "-i --hardware-platform",
        "-o --operating-system",
    ], what="prints system details"),
    form("date", [
        "-u --utc --universal", "-R --rfc-email", "-I[WORD]", "--iso-8601[=WORD]",
        "--rfc-3339 WORD", "-d --date DATE", "-r --reference FILE",
    ], "[+FORMAT]", what="prints the date (never sets it)"),
    form("env", ["-0 --null"], what="prints the environment (never runs a program)"),
    # -- git, reading ----------------------------------------------------------------------
    form("git status", [
        "-s --short", "-b --branch", "--porcelain[=WORD]", "--long",
        "-v --verbose", "-u[WORD]", "--untracked-files[=WORD]",
        "--ignored[=WORD]", "-z", "--show-stash",
        "--ahead-behind", "--no-ahead-behind", "--renames", "--no-renames",
    ], "[REV...]", style="git", what="shows the working tree's state"),
    form("git log", _GIT_LOG, "[REV...]", style="gitrev", numeric="any",
         what="shows commits"),
    form("git diff", [*_GIT_DIFF, "--cached", "--staged", "--check", "--histogram",
                      "--patience"], "[REV...]", style="gitrev", what="shows changes"),
    form("git show", [*_GIT_LOG], "[REV...]", style="gitrev", numeric="any",
         what="shows commits and files"),
    form("git blame", [
        "-L RANGE", "-w", "-e --show-email", "-s", "-l", "-t", "-p --porcelain",
        "--line-porcelain", "--root", "--show-name", "--show-number", "-f", "-n",
        "--date=WORD",
    ], "REV [REV]", style="gitrev", what="shows who changed each line"),
    form("git branch", [
        "-a --all", "-r --remotes", "-v --verbose", "-vv", "--show-current", "--no-color",
        "--sort=WORD", "--format=FORMAT", "--no-column",
    ], style="git", what="lists branches (never creates, renames or deletes one)"),
    form("git branch", [
        "-a --all", "-r --remotes", "-v --verbose", "-vv", "--list", "--no-color",
        "--sort=WORD", "--format=FORMAT", "--no-column",
    ], "[PATTERN...]", style="git", needs="--list", name="git branch --list",
        what="lists branches by name"),
    form("git tag", ["-l --list", "--sort=WORD", "--format=FORMAT", "-n[N]", "--no-column"],
         "[PATTERN...]", style="git", needs="-l --list", name="git tag --list",
         what="lists tags (never creates or deletes one)"),
    form("git tag", ["--sort=WORD", "--format=FORMAT", "-n[N]", "--no-column"], style="git",
         what="lists tags"),
    form("git ls-files", [
        "-c --cached", "-d --deleted", "-m --modified", "-o --others", "-i --ignored",
        "-s --stage", "-u --unmerged", "-k --killed", "-z", "-t", "-v", "-f", "--full-name",
        "--exclude-standard", "--directory", "--no-empty-directory", "--eol",
        "--deduplicate", "--error-unmatch", "-x PATTERN", "--exclude=PATTERN",
        "-X FILE", "--exclude-from=FILE",
    ], "[REV...]", style="git", what="lists tracked files"),
    form("git ls-tree", [
        "-r", "-d", "-t", "-l --long", "-z", "--name-only", "--name-status",
        "--object-only", "--full-name", "--full-tree", "--abbrev[=N]",
    ], "REV [REV...]", style="git", what="lists a tree's files"),
    form("git rev-parse", [
        "--show-toplevel", "--show-prefix", "--show-cdup", "--git-dir", "--git-common-dir",
        "--absolute-git-dir", "--is-inside-work-tree", "--is-inside-git-dir",
        "--is-bare-repository", "--is-shallow-repository", "--abbrev-ref[=WORD]",
        "--short[=N]", "--verify", "-q --quiet",
        "--symbolic-full-name",
    ], "[REV...]", style="gitrev", what="prints revisions and repository paths"),
    form("git describe", [
        "--tags", "--all", "--always", "--long", "--abbrev[=N]", "--exact-match",
        "--contains", "--first-parent", "--candidates=N", "--match=GLOB", "--exclude=GLOB",
    ], "[REV...]", style="git", what="names a commit by its nearest tag"),
    form("git shortlog", ["-s --summary", "-n --numbered", "-e --email", "-c --committer"],
         "REV [REV...]", style="gitrev", numeric="any", what="sums up commits by author"),
    form("git grep", [
        "-n --line-number", "-i --ignore-case", "-w --word-regexp", "-v --invert-match",
        "-l --files-with-matches", "-L --files-without-match", "-c --count", "-h", "-H",
        "--full-name", "-E --extended-regexp", "-F --fixed-strings", "-G --basic-regexp",
        "-P --perl-regexp", "-o --only-matching", "-q --quiet", "-z --null", "--cached",
        "--untracked", "--break", "--heading", "-p --show-function", "-W --function-context",
        "--column", "-a --text", "-I", "-e PATTERN", "-f FILE", "-A N", "-B N", "-C N",
        "--after-context=N", "--before-context=N", "--context=N", "--max-depth=N",
    ], "PATTERN [REV...]", style="git+", instead="-e -f",
        what="searches tracked files (never -O: it runs a pager)"),
    form("git remote", ["-v --verbose"], style="git", what="lists remotes"),
    form("git remote get-url", ["--push", "--all"], "NAME", style="git",
         what="prints a remote's address"),
    form("git stash list", style="git", what="lists stashes"),
    form("git cat-file", ["-t", "-s", "-p", "-e"], "REV [REV]", style="git",
         what="prints an object (never --textconv, --filters, --batch)"),
    form("git config", [
        "-l --list", "--local", "--global", "--system", "--show-origin", "--show-scope",
        "--name-only", "-z --null", "--includes",
    ], style="git+", needs="-l --list", name="git config --list",
        what="prints the configuration"),
    form("git config", [
        "--get", "--get-all", "--get-regexp", "--local", "--global", "--system",
        "--show-origin", "--show-scope", "--name-only", "-z --null", "--includes",
    ], "NAME", style="git+", needs="--get --get-all --get-regexp", name="git config --get",
        what="prints one setting (never sets one)"),
)  # fmt: skip
"""The rows; a program may have several (``git branch`` and ``git branch --list``)."""

# ``< FILE`` reads a file: input redirections are part of what the preset allows.
READS_INPUT = True

READERS = {
    "getopt": "getopt: `-la` is `-l -a`; `-n5`, `-n 5`, `--lines=5`, `--lines 5`; `--` ends options",
    "getopt+": "getopt whose options end at the first operand (its option string starts with `+`): after it, every word is an operand",
    "builtin": "bash's builtin: options only before the first operand; `--` ends them",
    "git": "git's options: `-sb` is `-s -b`; `--format=X` or `--format X`; `--` ends them",
    "git+": "git's options, ending at the first operand (git grep, git config): after it, every word is an operand",
    "gitrev": "git's revision options: one option per word, `--format=X` only (no `--format X`)",
    "jq": "jq's own: `-rc` is `-r -c`; values as the next words; no `--`",
    "find": "find's expression: folders first, then each word a listed test or operator",
    "test": "test's: only the listed operators may appear",
    "words": "no options: every word is text",
}


def markdown(rows: tuple[Form, ...] = ROWS) -> str:
    """The table as docs/policy.md prints it: one line per row."""
    lines = [
        "| command | options it may take, spelled exactly | operands | read as | what it does |",
        "|---|---|---|---|---|",
    ]
    kinds: dict[str, str] = {}
    for row in rows:
        spelled = [o.spelled for o in row.options] + sorted(row.operators)
        options = " ".join(f"`{text}`" for text in spelled) or "none"
        operands = f"`{row.spelled_operands}`" if row.spelled_operands else "none"
        if row.style in ("words", "test"):
            operands = "any words (text)"
        if row.numeric:
            options += " `-NUM` (a count" + (", first)" if row.numeric == "first" else ")")
        if row.plus:
            options += " `+NUM` (a count, first; not `+NUMf`)"
        reader = row.style if row.style != "test" else "test"
        lines.append(f"| `{row.name}` | {options} | {operands} | {reader} | {row.what} |")
        for option in row.options:
            kinds.update((k.name, k.what) for k in option.values)
        for slot in row.operands:
            kinds[slot.kind.name] = slot.kind.what
    lines += [
        "",
        "Values and operands: "
        + "; ".join(f"`{name}` {what}" for name, what in sorted(kinds.items()))
        + ".",
    ]
    lines += ["", "Readers (how each row takes its words apart, as the program does):", ""]
    lines += [f"- **{name}**: {text}" for name, text in READERS.items()]
    lines += ["", *_reader_flags()]
    return "\n".join(lines)


def _reader_flags() -> list[str]:
    """The option readers' rules as co_core/policy/shell/forms.py applies them."""
    columns = {
        "`-la` is `-l -a`": forms.CLUSTERS,
        "`-n5` is `-n 5`": forms.ATTACHED_SHORT,
        "`--lines 5` is `--lines=5`": forms.SEPARATE_LONG,
        "`--` ends options": forms.DASHDASH,
        "options after an operand": forms.PERMUTE,
    }
    lines = ["| reader | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name in forms.CLUSTERS:
        cells = ["yes" if flags[name] else "no" for flags in columns.values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


if __name__ == "__main__":
    print(markdown())
