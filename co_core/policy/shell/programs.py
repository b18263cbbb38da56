"""Arguments that write files or run programs: a rule must name them.

``find -delete``, ``rg --pre``, ``git -c``, ``sed -i``, ``awk 'system(…)'``, ``sort -o``: a
rule for the program covers them only if the rule names them. The knowledge is data (each
program's dangerous options and how it reads its options) plus small functions for the
operands that matter (a sed script, an awk program, old-style ``tar xf``, uniq's output).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from co_core.policy.shell.git import git_findings
from co_core.policy.shell.inner import SHELLS, WRAPPERS, base
from co_core.policy.shell.options import Parsed, Syntax, expand, parse
from co_core.policy.shell.scripts import awk_risks, sed_risks


@dataclass(frozen=True)
class Finding:
    """An argument that writes or runs something: ``word`` is its index in the command."""

    word: int
    why: str


@dataclass(frozen=True)
class Program:
    """One program's dangerous options (option -> what it does)."""

    danger: Mapping[str, str]
    syntax: Syntax = Syntax()
    prefixes: bool = False  # GNU getopt_long: ``--outp`` is ``--output``
    exact: frozenset[str] = frozenset()  # real options that are prefixes of dangerous ones
    operands: Operands | None = None  # (words, parsed, indices of file patterns)
    known: frozenset[str] = frozenset()  # other long options a prefix may stand for


def _same(why: str, *options: str) -> dict[str, str]:
    return dict.fromkeys(options, why)


RUNS, WRITES = "runs a command", "writes a file"
Operands = Callable[[tuple[str, ...], Parsed, frozenset[int]], list[Finding]]


def _nth_operand_writes(n: int) -> Operands:
    def check(words: tuple[str, ...], parsed: Parsed, globbed: frozenset[int]) -> list[Finding]:
        operands = parsed.real_operands()  # uniq -- -z OUT: -z is the input, OUT written
        if len(operands) > n:
            i = operands[n]
            return [Finding(i, f"{words[i]} is the file it writes its output to")]
        patterns = [i for i in operands if i in globbed]
        if patterns:  # uniq src/*: the second file the pattern finds would be written
            return [Finding(patterns[0], "a file pattern can name the file it writes to")]
        return []

    return check


def _tar_operands(words: tuple[str, ...], parsed: Parsed, globbed: frozenset[int]) -> list[Finding]:
    """Old-style ``tar xzf a.tgz``: the first word is a cluster of option letters."""
    if len(words) > 1 and not words[1].startswith("-") and 1 in parsed.operands:
        letters = {f"-{c}" for c in words[1]}
        return [
            Finding(1, f"{option} {TAR.danger[option]}")
            for option in sorted(letters)
            if option in TAR.danger
        ]
    return []


def _script_findings(
    words: tuple[str, ...],
    parsed: Parsed,
    sources: tuple[str, ...],
    files: tuple[str, ...],
    risks: Callable[[str], list[str]],
    globbed: frozenset[int],
) -> list[Finding]:
    """A sed script or awk program: given with ``sources`` options, else the first operand.
    A pattern (``B*``) there is a file name chosen when it runs: its text is unknown."""
    scripts = [(i, v, {i, i + 1}) for i, v in parsed.values_of(*sources)]
    found = []
    if not scripts and not parsed.values_of(*files) and parsed.operands:
        first = parsed.operands[0]
        scripts = [(first, words[first], {first})]
    for i, script, at in scripts:
        if at & globbed:
            found.append(
                Finding(i, "its program is a file pattern, whose text is chosen when it runs")
            )
        found += [Finding(i, why) for why in risks(script)]
    return found


def _date_operands(
    words: tuple[str, ...], parsed: Parsed, globbed: frozenset[int]
) -> list[Finding]:
    """``date MMDDhhmm``: an operand that is not +FORMAT sets the clock."""
    found = [i for i in parsed.real_operands() if not words[i].startswith("+")]
    return [Finding(found[0], "sets the clock")] if found else []


def _sed_operands(words: tuple[str, ...], parsed: Parsed, globbed: frozenset[int]) -> list[Finding]:
    end = parsed.dashdash if parsed.dashdash is not None else len(words)
    if any(words[i] == "--sandbox" and i < end for i, _, _ in parsed.options):
        return []  # GNU sed refuses e, w and r in sandbox mode (spelled out, before --)
    sources, files = ("-e", "--expression"), ("-f", "--file")
    return _script_findings(words, parsed, sources, files, sed_risks, globbed)


def _awk_operands(words: tuple[str, ...], parsed: Parsed, globbed: frozenset[int]) -> list[Finding]:
    files = ("-f", "--file", "-E", "--exec")
    return _script_findings(words, parsed, ("-e", "--source"), files, awk_risks, globbed)


TAR = Program(
    {
        **_same("writes files (extracts)", "-x", "--extract", "--get"),
        **_same("writes an archive", "-c", "--create", "-r", "--append", "-u", "--update"),
        **_same("writes an archive", "-A", "--catenate", "--concatenate", "--delete"),
        **_same("writes a file", "-g", "--listed-incremental", "--index-file"),
        **_same(RUNS, "--to-command", "-I", "--use-compress-program", "--rsh-command"),
        **_same(RUNS, "-F", "--info-script", "--new-volume-script", "--checkpoint-action"),
    },
    Syntax(
        values="bCfFgHIKLNTVX",
        long_values=frozenset({"--file", "--directory", "--use-compress-program"}),
    ),
    prefixes=True,
    exact=frozenset({"--list", "--checkpoint"}),
    operands=_tar_operands,
)
AWK = Program(
    {
        **_same("reads its program from a file Co cannot see", "-f", "--file", "-E", "--exec"),
        **_same("includes a program file Co cannot see", "-i", "--include"),
        **_same("loads a compiled extension", "-l", "--load"),
        **_same(WRITES, "-o", "--pretty-print", "-p", "--profile", "-d", "--dump-variables"),
        "-W": "sets an awk option Co does not read",
    },
    Syntax(values="FfvEeilW", optional="opdDL", long_values=frozenset({"--source", "--file"})),
    prefixes=True,
    operands=_awk_operands,
)
PROGRAMS: dict[str, Program] = {
    "find": Program(
        {
            **_same(RUNS, "-exec", "-execdir", "-ok", "-okdir"),
            "-delete": "deletes files",
            **_same(WRITES, "-fprint", "-fprint0", "-fprintf", "-fls"),
        },
        Syntax(single_dash=True),
    ),
    "rg": Program(
        {
            "--pre": "runs a program on every file it searches",
            "--hostname-bin": RUNS,
            **_same("runs decompression programs", "-z", "--search-zip"),
        },
        Syntax(values="ABCEMTdefgjmrt"),
    ),
    "fd": Program(_same(RUNS, "-x", "--exec", "-X", "--exec-batch")),
    "fdfind": Program(_same(RUNS, "-x", "--exec", "-X", "--exec-batch")),
    "sed": Program(
        {
            **_same("writes the files it reads", "-i", "--in-place"),
            **_same("reads its script from a file Co cannot see", "-f", "--file"),
        },
        Syntax(values="efl", optional="i", long_values=frozenset({"--expression", "--file"})),
        prefixes=True,
        operands=_sed_operands,
        known=frozenset({"--sandbox", "--separate", "--silent", "--quiet", "--posix"}),
    ),
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), AWK),
    "sort": Program(
        {
            **_same(WRITES, "-o", "--output"),
            **_same("writes temporary files in that folder", "-T", "--temporary-directory"),
            "--compress-program": RUNS,
        },
        Syntax(
            values="kostST",
            long_values=frozenset({"--output", "--compress-program", "--temporary-directory"}),
        ),
        prefixes=True,
    ),
    "diff": Program(
        _same("runs pr on its output", "-l", "--paginate"),
        Syntax(values="CDFILSUWXx"),
        prefixes=True,
    ),
    "uniq": Program({}, Syntax(values="fsw"), operands=_nth_operand_writes(1)),
    "xxd": Program({}, Syntax(values="cglos"), operands=_nth_operand_writes(1)),
    "shuf": Program(_same(WRITES, "-o", "--output"), Syntax(values="ino"), prefixes=True),
    "iconv": Program(_same(WRITES, "-o", "--output"), Syntax(values="fto"), prefixes=True),
    "tar": TAR,
    "base64": Program(_same(WRITES, "-o", "--output"), Syntax(values="w")),
    "less": Program(_same(WRITES, "-o", "-O", "--log-file", "--LOG-FILE")),
    "more": Program(_same(WRITES, "-o", "-O", "--log-file", "--LOG-FILE")),
    "man": Program(_same(RUNS, "-P", "--pager", "-H", "--html")),
    "tree": Program(_same(WRITES, "-o"), Syntax(values="LPIHTo")),
    "file": Program(
        {
            **_same(WRITES, "-C", "--compile"),
            **_same("runs decompression programs", "-z", "-Z", "--uncompress"),
            **_same("changes the access times of what it reads", "-p", "--preserve-date"),
        },
        Syntax(values="emfFP"),
        prefixes=True,
        known=frozenset({"--uncompress-noreport"}),
    ),
    "date": Program(
        _same("changes the clock", "-s", "--set"),
        Syntax(
            values="dfrsD",
            long_values=frozenset({"--date", "--reference", "--set", "--rfc-3339", "--file"}),
        ),
        prefixes=True,
        operands=_date_operands,
    ),
    "yq": Program(_same("writes the files it reads", "-i", "--inplace")),
    "time": Program(_same(WRITES, "-o", "--output"), Syntax(values="fo")),
    "strace": Program(_same(WRITES, "-o", "--output"), Syntax(values="abeEIoOpPsSuUX")),
    "curl": Program(
        {
            **_same(WRITES, "-o", "--output", "-O", "--remote-name", "--remote-name-all"),
            **_same(WRITES, "--output-dir", "-D", "--dump-header", "-c", "--cookie-jar"),
            **_same(WRITES, "--trace", "--trace-ascii", "--libcurl", "--stderr"),
            **_same(WRITES, "--etag-save", "--hsts", "--alt-svc"),
            **_same("reads its options from a file", "-K", "--config"),
        },
        Syntax(values="AbcCdDeEFHKmoPQrTuUwxXYyz"),
    ),
    "ssh": Program(
        {
            "-o": "sets options that can run a local command (ProxyCommand, LocalCommand)",
            "-F": "reads a configuration that can run local commands",
            "-E": WRITES,
        },
        Syntax(values="BbcDEeFIiJLlmOoPpQRSWw"),
    ),
    "scp": Program(
        {"-S": RUNS, "-o": "sets options that can run a local command", "-F": "reads a config"},
        Syntax(values="cDFiJloPS"),
    ),
    "rsync": Program(_same(RUNS, "-e", "--rsh"), prefixes=True),
}


def findings(words: tuple[str, ...], globbed: frozenset[int] = frozenset()) -> list[Finding]:
    """The arguments of this command that write files or run something. ``globbed``: the
    indices of words that are file patterns (expanded when the command runs)."""
    name = base(words[0])
    if name == "git":
        return [Finding(i, why) for i, why in git_findings(words)]
    spec = PROGRAMS.get(name)
    if spec is None:
        return []
    longs = [o for o in spec.danger if o.startswith("--")]
    known = [*longs, *spec.known, *spec.exact] if spec.prefixes else []
    parsed = parse(words, spec.syntax, known=known)
    found = []
    for i, option, _ in parsed.options:
        names = [option]
        if spec.prefixes and option.startswith("--"):
            names = expand(option, longs, spec.exact) or names
        for full in names:
            if full in spec.danger:
                found.append(Finding(i, f"{full} {spec.danger[full]}"))
    if spec.operands is not None:
        found += spec.operands(words, parsed, globbed)
    return found


def folder_findings(parts: list[Any]) -> list[Any]:
    """``cd sub && git status`` is ``git -C sub status``: git then reads the configuration
    of the repository ``sub`` is in, which can run programs. When a command runs git, a
    ``cd``/``pushd`` to a folder (or ``env -C``) must be named by its rule like ``-C``."""
    from dataclasses import replace

    if not any(p.kind == "exec" and p.words and base(p.words[0]) == "git" for p in parts):
        return parts
    why = "git then runs in another folder, whose repository configuration can run programs"
    out = []
    for part in parts:
        name = base(part.words[0]) if part.kind == "exec" and part.words else ""
        found = []
        if name in ("cd", "pushd") and len(part.words) > 1:
            found = [Finding(len(part.words) - 1, f"{part.words[-1]}: {why}")]
        elif name == "env" and "git" in map(base, part.words):
            env = WRAPPERS["env"].syntax  # -iC DIR, --ch=DIR: as env reads its options
            parsed = parse(part.words, env, known=env.long_values)
            flags = [i for i, n, _ in parsed.options if n in ("-C", "--chdir")]
            found = [Finding(i, f"-C: {why}") for i in flags[:1]]
        out.append(replace(part, findings=part.findings + tuple(found)) if found else part)
    return out


def has_findings(name: str) -> bool:
    """Does this program have arguments that write or run (so run-time arguments matter)?"""
    name = base(name)
    return name in PROGRAMS or name in ("git",) or name in WRAPPERS or name in SHELLS
