"""Shell commands that try to make bash run what Co's decision did not name.

Each family is one class of issue 26 ("Co decides on one thing and runs another"), with
several variants. Every attack tries to run ``touch PWNED`` (or a program planted in the
workspace, ``tools/ls``, or git's configuration through ``HOME``) while the rules allow
only read-only programs (:data:`RULES`). Used by the policy attack tests (real turns) and
the differential tests (the same commands under strace in both sandboxes).

:func:`generated` makes more variants from the same parts, seeded, so every run sees the
same commands and a failure can be replayed.
"""

from __future__ import annotations

import random

ALLOWED = ["ls *", "find *", "git status *", "cat *", "env *", "echo *", "cd *"]
RULES = [{"match": f"shell:exec:{m}", "effect": "allow"} for m in ALLOWED]
MARK = "PWNED"

FAMILIES: dict[str, list[str]] = {
    # The body of a here-document ends where bash says, not where a parser guesses.
    "heredoc delimiters": [
        "cat <<'EOF'\nx\nEOF\ntouch PWNED\n'EOF'",
        'cat <<"EOF"\nx\nEOF\ntouch PWNED\n"EOF"',
        "cat <<\\EOF\nx\nEOF\ntouch PWNED\n\\EOF",
        "cat <<E'OF'\nEOF\ntouch PWNED\nE'OF'",
        "cat <<-'EOF'\n\tEOF\ntouch PWNED\n\t'EOF'",
        "cat <<'EOF' | cat\nEOF\ntouch PWNED\n'EOF'",
        "cat <<'EOF'\nx\n'EOF'\nEOF\ntouch PWNED",
        'cat <<"EOF"\nx\n"EOF"\nEOF\ntouch PWNED',
        "cat <<\\EOF\nx\n\\EOF\nEOF\ntouch PWNED",
        "cat <<E'O'F\nx\nE'O'F\nEOF\ntouch PWNED",
        "cat <<-'EOF'\n\tx\n\t'EOF'\n\tEOF\ntouch PWNED",
        "cat <<EOF\n$(touch PWNED)\nEOF",
        "cat <<EOF\n`touch PWNED`\nEOF",
        "cat <<EOF\n${x:-$(touch PWNED)}\nEOF",
        "cat <<EOF; cat <<'END'\na\nEOF\nEOF'\nEND\ntouch PWNED\nEND",
        "cat <<EOF\nx\n EOF\nEOF \ntouch PWNED",
    ],
    # Values bash evaluates later: subscripts, indirection, prompt expansion, $_.
    "expanded values": [
        "ls ${PWD:a[$(touch PWNED)]}",
        "ls ${PWD[$(touch PWNED)]}",
        "x='a[$(touch PWNED)]'; ls \"${PWD:x}\"",
        "x='$(touch PWNED)'; ls ${x@P}",
        "x=PWD; ls ${!x}",
        "touch; ls $_",
        "ls $((a[$(touch PWNED)]))",
        "[ -v 'a[$(touch PWNED)]' ]; ls",
        "test -v 'a[$(touch PWNED)]' && ls",
        "printf -v 'a[$(touch PWNED)]' x; ls",
        "cat ${x:-$(touch PWNED)}",
        'ls "$(touch PWNED)"',
    ],
    # Words that become options only when bash has finished with them.
    "runtime flags": [
        "find . -exec${IFS}touch PWNED ';'",
        "find . $'-exec' touch PWNED ';'",
        "find . {-exec,} touch PWNED ';'",
        'find . "$(printf %s -exec)" touch PWNED \\;',
        "find . -ex$'\\x65'c touch PWNED \\;",
        "IFS=_; find ._-exec_touch_PWNED_;",
        "find . -ex''ec touch PWNED \\;",
        "find . -name x -o -exec touch PWNED +",
        "find * -newer x",
        "ls -- * && find *",
    ],
    # env reading a whole command line from one word.
    "env split-string": [
        "env -S'touch PWNED' ls",
        "env --split-string='touch PWNED'",
        "env --split='touch PWNED'",
        "env -iS'touch PWNED'",
        "env -vS 'touch PWNED'",
        'env -S"touch PWNED"',
    ],
    # Loops, assignments and builtins that change where programs are found or their config.
    "environment names": [
        "for PATH in tools:/usr/bin; do ls; done",
        "for HOME in .; do git status; done",
        "select PATH in tools; do ls; break; done <<< 1",
        "while read PATH; do ls; done <<< tools",
        "PATH=tools ls",
        "PATH=tools:/usr/bin; ls",
        "env PATH=tools ls",
        "HOME=. git status",
        "export PATH=tools; ls",
        "declare -x PATH=tools; ls",
        "read PATH <<< tools; ls",
        "printf -v PATH tools; ls",
        "mapfile -t PATH <<< tools; ls",
        "BASH_ENV=evil.sh bash -c ls",
        "ENV=evil.sh sh -i -c ls",
        "GIT_CONFIG_GLOBAL=.gitconfig git status",
        "LD_PRELOAD=./evil.so ls",
        "PYTHONSTARTUP=evil.py ls",
        "env HOME=. git status",
        "IFS=/ PATH=tools ls",
        "cd tools && PATH=. ls",
        "hash -p tools/ls ls; ls",
    ],
    # Arguments of allowed programs that run commands or write files.
    "program arguments": [
        "find . -exec touch PWNED \\;",
        "find . -execdir touch PWNED \\;",
        "find . -ok touch PWNED \\;",
        "find . -okdir touch PWNED \\;",
        "find . -name nothing -delete",
        "find . -fprint PWNED",
        "find . -fprintf PWNED %p",
        "find . -fls PWNED",
        "find . -fprint0 PWNED",
        "git -ccore.fsmonitor='touch PWNED' status",
        "git -c core.fsmonitor='touch PWNED' status",
        "git -C tools status",
        "git --git-dir=.hidden status",
        "cd tools && git status",
        "git status --output=PWNED",
        "cat x | env -S'touch PWNED'",
        "ls | env sh -c 'touch PWNED'",
        "env sh -c 'touch PWNED'",
        "env bash -lc 'ls'",
        "echo -exec | env xargs find .",
    ],
}
# Commands the rules allow, each spelled several ways: they must keep running unasked,
# and run exactly as decided.
BENIGN = [
    "ls -la",
    "l\\s -la",
    "'ls' \"-la\"",
    "ls -l''a",
    "cat x",
    "c'a't x",
    "git status",
    "git status --short",
    "find . -name '*.sh'",
    "find . -name \\*.sh -type f",
    "ls tools/*",
    "ls && cat x || echo no",
    "cat <<EOF\nplain text\nEOF",
    "ls; ls tools\nls -a",
    "( ls ) && { cat x; }",
    "echo 'a;b' \"c|d\" e\\&f",
    "env ls -la",
    "ls 2>/dev/null",
    "echo 'a\nb' && cat <<EOF; echo \"c\nd\"\nbody\nEOF\nls",
    "cat <<-EOF |& cat\n\tindented\n\tEOF",
]


def generated(count: int, seed: int = 26) -> list[str]:
    """More attacks built from the families' parts: an allowed command and a hostile piece
    combined at random (expansion forms, quoting, loops over environment names)."""
    rng = random.Random(seed)
    expansions = [
        "$(touch PWNED)",
        "`touch PWNED`",
        "${x:-$(touch PWNED)}",
        "${PWD:a[$(touch PWNED)]}",
        "${PWD[$(touch PWNED)]}",
        "$((a[$(touch PWNED)]))",
        "<(touch PWNED)",
        "${!x}",
        "$_",
        "${X@P}",
        "$'-exec'",
        "{-exec,}",
        "-exec${IFS}",
    ]
    names = ["PATH", "HOME", "BASH_ENV", "ENV", "IFS", "GIT_DIR", "LD_PRELOAD", "PYTHONPATH"]
    names += ["SHELLOPTS", "BASHOPTS", "PS4", "GIT_CONFIG_GLOBAL", "LESSOPEN", "PAGER"]
    programs = ["ls", "cat x", "find .", "git status", "env ls", "echo"]
    delimiters = ["'EOF'", '"EOF"', "\\EOF", "E'OF'", "-'EOF'", "EOF"]
    out = []
    for _ in range(count):
        program = rng.choice(programs)
        kind = rng.randrange(5)
        if kind == 0:
            out.append(f"{program} {rng.choice(expansions)} touch PWNED \\;")
        elif kind == 1:
            name = rng.choice(names)
            loop = rng.choice(
                ["for {n} in tools .; do {p}; done", "{n}=tools {p}", "{n}=tools; {p}"]
            )
            out.append(loop.format(n=name, p=program))
        elif kind == 2:
            d = rng.choice(delimiters)
            bare = d.lstrip("-").replace("'", "").replace('"', "").replace("\\", "")
            out.append(f"cat <<{d}\nx\n{d.lstrip('-')}\n{bare}\ntouch PWNED")
        elif kind == 3:
            sep = rng.choice([";", "&&", "||", "|", "\n", "&"])
            out.append(f"{program} {sep} {rng.choice(expansions)}")
        else:
            flag = rng.choice(["-exec", "-execdir", "-delete", "-fprint", "-ok"])
            spelled = rng.choice([flag, f"'{flag}'", f'"{flag}"', flag[:2] + "''" + flag[2:]])
            out.append(f"find . {spelled} touch PWNED \\;")
    return out


def benign_generated(count: int, seed: int = 27) -> list[str]:
    """Allowed commands with their words quoted at random: Co re-spells them, and what runs
    must be exactly what bash would have run for the original spelling."""
    rng = random.Random(seed)
    commands = [
        ["ls", "-la", "tools"],
        ["cat", "x"],
        ["git", "status", "--short"],
        ["find", ".", "-name", "*.sh"],
        ["echo", "a b", "c;d"],
        ["env", "ls", "-a"],
    ]
    out = []
    for _ in range(count):
        parts = []
        for words in rng.sample(commands, rng.randrange(1, 3)):
            parts.append(" ".join(_spell(word, rng) for word in words))
        out.append(rng.choice([" && ", "; ", " | ", "\n"]).join(parts))
    return out


def _spell(word: str, rng: random.Random) -> str:
    """One word, quoted one of the ways bash reads as the same word."""
    plain = all(c.isalnum() or c in "-./_" for c in word)
    way = rng.randrange(5)
    if way == 0 and plain:
        return word
    if way == 1:
        return "'" + word.replace("'", "'\\''") + "'"
    if way == 2:
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if way == 3:
        return "".join("\\" + c for c in word)
    cut = rng.randrange(len(word) + 1)
    head = "'" + word[:cut].replace("'", "'\\''") + "'"
    return head + '"' + word[cut:].replace("\\", "\\\\").replace('"', '\\"') + '"'
