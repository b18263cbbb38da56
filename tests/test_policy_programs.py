"""A rule for a program covers the arguments that write files or run programs only if it
names them: ``shell:exec:find *`` allows ``find . -name x`` but asks about ``find -delete``.

Each program is tried with every spelling getopt accepts (``--opt=v``, ``--opt v``, an
unambiguous ``--op`` prefix, ``-xo`` clusters, ``-ovalue``) against its own ``X *`` rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import call, engine_for

PROGRAMS = ["find", "rg", "git", "sed", "awk", "gawk", "sort", "tar", "xargs", "base64"]
PROGRAMS += ["uniq", "fd", "less", "curl", "ssh", "tree", "env", "timeout", "bash", "sh"]
PROGRAMS += ["cd", "pushd", "date", "diff", "file", "printf"]
RULES = [{"match": f"shell:exec:{p} *", "effect": "allow"} for p in PROGRAMS]

ASKED = {
    "find": [
        "find . -exec rm {} \\;",
        "find . -execdir sh -c id \\;",
        "find . -ok rm {} +",
        "find . -okdir rm {} +",
        "find . -name '*.pyc' -delete",
        "find . -fprint out",
        "find . -fprint0 out",
        "find . -fprintf out %p",
        "find . -fls out",
        "find . -type f -newer x -o -delete",
    ],
    "rg": [
        "rg --pre ./evil.sh TODO",
        "rg --pre=./evil.sh TODO",
        "rg --hostname-bin=./evil.sh TODO",
        "rg --hostname-bin ./evil TODO",
        "rg -z TODO",
        "rg -iz TODO",
        "rg --search-zip TODO",
        "rg -nzi TODO",
    ],
    "git": [
        "git -c core.pager=evil log",
        "git -ccore.pager=evil log",
        "git --config-env=core.pager=EVIL log",
        "git -C ../other status",
        "git --git-dir=../x/.git status",
        "git --work-tree=/tmp status",
        "git --exec-path=./tools status",
        "git -p log",
        "git --paginate log",
        "git diff --output=~/.bashrc",
        "git diff --output ~/.bashrc",
        "git log --outp=x",
        "git diff --ext-diff",
        "git diff --ext",
        "git log -p --textconv",
        "git show --textc HEAD",
        "git cat-file --filters HEAD:x",
        "git grep -O TODO",
        "git grep --open-files-in-pager=vim TODO",
        "git config core.pager evil",
        "git config --add alias.x '!sh'",
        "git config --edit",
        "git config set core.pager evil",
        "git remote add origin ext::sh",
        "git remote set-url origin x",
        "git submodule foreach id",
        "git hook run pre-commit",
        "git difftool",
        "git rebase -x id main",
        "git rebase --exec=id main",
        "git branch -D main",
        "git branch new-branch",
        "git branch --set-upstream-to=origin/x",
        "git branch --edit-description",
        "git tag v1",
        "git tag -d v1",
        "git stash",
        "git clone --template=hooks repo",
        "git clone -u ./evil repo",
        "git fetch --upload-pack=./evil",
        "git push --receive-pack=./evil",
        "git my-alias",
        "git st",
    ],
    "sed": [
        "sed -i s/a/b/ x",
        "sed -i.bak s/a/b/ x",
        "sed -ni s/a/b/p x",
        "sed --in-place s/a/b/ x",
        "sed --in-pl s/a/b/ x",
        "sed 1e\\ id x",
        "sed -n '1e id' x",
        "sed 's/a/id/e' x",
        "sed 's/a/b/w out' x",
        "sed -e 's/a/b/gw out' x",
        "sed --expression='w out' x",
        "sed -es/x/y/e x",
        "sed '/x/w out' x",
        "sed 'W out' x",
        "sed -f script.sed x",
        "sed -e '1{e id' -e '}' x",
        "sed 's/[/]/x/e' x",
        "sed B* x",
        "sed -e s* x",
        # issue 35: prefixes, options after --, labels and versions as each sed reads them
        "sed --expr='1e id' x",
        "sed --e='w out' x",
        "sed --expressi='w out' x",
        "sed --expr 'w out' x",
        "sed -n 'w out' x -- --sandbox",
        "sed --sa -e 'w out' x",
        "sed ':a e id' x",
        "sed -n 'ba w out' x",
        "sed 'v 4.2 e id' x",
        "sed -n 's/[/]/x/;w out' x",
        "sed -n '/[/]/w out' x",
    ],
    "awk": [
        "awk 'BEGIN{system(\"id\")}'",
        "awk '{print | \"sh\"}' x",
        "awk '{\"date\" | getline d}' x",
        "awk '{print $1 > \"out\"}' x",
        'awk \'{printf("%s", $1) >> "out"}\' x',
        "awk -f prog.awk x",
        "awk -e 'BEGIN{system(\"id\")}'",
        "awk --source='BEGIN { system(\"id\") }'",
        'awk \'/"/ { print | "sh" }\' x',
        'awk \'BEGIN { s = "system"; print s > "f" }\'',
        "awk -l ./evil x",
        "awk B*",
        "awk -e x* y",
        "awk '@load \"x\"; 1' x",
        # issue 35: a line continuation before / (a division), and inside system
        "awk 'BEGIN { x = 1 \\\n/ 2; print | \"sh\" }'",
        "awk 'BEGIN { system\\\n(\"id\") }'",
        'gawk \'BEGIN { f = "system"; @f("id") }\'',
    ],
    "gawk": ["gawk -o out '1' x", "gawk --profile=out 1 x", "gawk -E prog.awk x"],
    "sort": [
        "sort -o out x",
        "sort -oout x",
        "sort -uo out x",
        "sort --output=out x",
        "sort --output out x",
        "sort --outp=out x",
        "sort --compress-program=./evil x",
        "sort --compress=./evil x",
        "sort -T . x",
        "sort --temporary-directory=. x",
        "sort -uT. x",
    ],
    "tar": [
        "tar -xf a.tar",
        "tar xf a.tar",
        "tar -czf out.tgz src",
        "tar czf out.tgz src",
        "tar --extract -f a.tar",
        "tar --to-command=./evil -tf a.tar",
        "tar --to-com=./evil -tf a.tar",
        "tar -I ./evil -tf a.tar",
        "tar --use-compress-program=./evil -tf a.tar",
        "tar -tf a.tar --checkpoint-action=exec=id",
        "tar -tf a.tar -F ./evil",
    ],
    "xargs": ["echo -delete | xargs find .", "xargs git log", "xargs sed -n p", "xargs env"],
    "base64": [
        "base64 -o out x",
        "base64 --output=out x",
        "base64 --output out x",
        "base64 -oout x",
    ],
    "uniq": [
        "uniq in out",
        "uniq -c in out",
        "uniq src/*.txt",
        "uniq -- -z out",
        "uniq -c -- in out",
    ],
    "date": ["date 010100002020", "date -s now", "date --se=now", "date -u 0101", "date -- 0101"],
    "diff": ["diff -l x y", "diff --pagin x y", "diff -ul x y"],
    "file": ["file --comp -m x", "file -C -m x", "file -z x", "file -bz x", "file --uncomp x"],
    "printf": ["printf -v'a[$(id)]' x", "printf -vx y", "printf -v x y"],
    "fd": ["fd -x rm", "fd --exec rm", "fd -X rm", "fd . --exec-batch rm"],
    "less": ["less -o log x", "less --log-file=log x"],
    "curl": ["curl -o out https://x", "curl -sSLo out https://x", "curl --output=out x"],
    "ssh": ["ssh -o ProxyCommand=id host", "ssh -F cfg host"],
    "tree": ["tree -o out"],
    "env": ["env -S 'rm x'", "env --split-string='rm x'", "env -iS'rm x'"],
    "xargs ": [
        "xargs --process-slot-var=LD_LIBRARY_PATH ls",
        "xargs -a /dev/null --process-slot-var=LD_PRELOAD ls",
        "xargs --process-slot=PATH ls",
    ],
    "timeout": ["timeout 5 find . -delete"],
    "bash": ["bash -c 'find . -delete'", "bash -lc ls", "bash script.sh", "bash -i -c ls"],
    "sh": ["sh -c 'rg --pre=x y'", "sh script.sh", "sh"],
    "cd": [
        "cd sub && git status",
        "pushd sub; git log",
        "env -C sub git status",
        "cd .. && git diff",
        "env -iC sub git status",
        "env --ch=sub git status",
        "env -0C. git status",
    ],
}
ALLOWED = {
    "find": ["find . -name '*.py'", "find src -type f -newer x", "find . -maxdepth 2 -print"],
    "rg": ["rg TODO", "rg -n -i TODO src", "rg -e --pre", "rg -g '*.py' TODO", "rg -tpy TODO"],
    "git": [
        "git status",
        "git status --short",
        "git log --oneline -5",
        "git log -p -1",
        "git diff --stat",
        "git diff --text",
        "git show HEAD",
        "git branch",
        "git branch -a",
        "git branch --show-current",
        "git branch --list 'feat*'",
        "git tag",
        "git tag -l 'v*'",
        "git config user.name",
        "git config --get core.pager",
        "git config --list",
        "git remote -v",
        "git stash list",
        "git rev-parse HEAD",
        "git ls-files",
        "git clone --filter=blob:none repo",
    ],
    "sed": [
        "sed -n 1,5p x",
        "sed -n '1,5p' x",
        "sed 's/a/b/g' x",
        "sed -e 's/wow/ew/' x",
        "sed -E 's/(e|w)+/x/2' x",
        "sed '/^#/d' x",
        "sed -n '/start/,/end/p' x",
        "sed 'y/abc/xyz/' x",
        "sed '$!N;s/\\n/ /' x",
        "sed --sandbox 's/a/b/e' x",
        "sed 's/[0-9]/x/g' x",
        "sed -n '/^[a-z]*$/p' x",
        "sed -e :a -e '$!N;ba' x",
    ],
    "awk": [
        "awk '{print $1}' x",
        "awk -F: '{print $1}' /etc/passwd",
        "awk '$3 > 100' x",
        "awk 'NR > 1 { print ($2 > 5) }' x",
        "awk '/a|b/' x",
        "awk '$1 == 1 || $2 == 2' x",
        "awk -v n=3 'NR==n' x",
        "awk 'BEGIN { x = 4 / 2; print x }'",
    ],
    "gawk": ["gawk '{print}' x"],
    "sort": ["sort x", "sort -u -k2,2 x", "sort -t: -k3n x", "sort --check x", "sort -n -r x"],
    "tar": ["tar -tf a.tar", "tar tvf a.tar", "tar -tzf a.tgz", "tar --list -f a.tar"],
    "xargs": ["find . -name '*.py' | xargs grep -n TODO"],
    "base64": ["base64 x", "base64 -d x", "base64 -w0 x"],
    "uniq": ["uniq x", "uniq -c x", "uniq -f 1 x", "uniq -- x"],
    "date": ["date", "date +%Y", "date -d yesterday +%F", "date -u -- +%s"],
    "diff": ["diff -u x y", "diff -U 3 x y", "diff -q x y"],
    "file": ["file -b x", "file --mime-type x"],
    "printf": ["printf '%s\\n' x", "printf -- -v"],
    "fd": ["fd -e py", "fd src"],
    "less": ["less x"],
    "curl": ["curl -s https://x", "curl -sSL https://x"],
    "ssh": ["ssh host ls"],
    "tree": ["tree -L 2"],
    "env": ["env ls", "env -i ls", "env LC_ALL=C sort x"],
    "timeout": ["timeout 5 find . -name x"],
    "bash": ["bash -c 'ls -la'", "bash -ec 'ls && git status'", "bash -euo pipefail -c ls"],
    "sh": ["sh -c 'ls | sort'"],
    "cd": ["cd src && ls", "cd src && find . -name x", "git status && ls"],
}
EXTRA_RULES = [
    {"match": f"shell:exec:{p} *", "effect": "allow"} for p in ("ls", "grep", "id", "rm")
]


@pytest.fixture
def engine(co_dirs: Path, tmp_path: Path):
    return engine_for(tmp_path, user_rules=RULES + EXTRA_RULES)


def _cases(table: dict[str, list[str]]) -> list[str]:
    return [command for commands in table.values() for command in commands]


@pytest.mark.parametrize("command", _cases(ASKED))
def test_arguments_that_write_or_run_are_not_covered_by_a_rule_for_the_program(
    engine, command: str
) -> None:
    decision = engine.decide(call(engine, "run_shell", cmd=command))
    assert decision.effect == "ask", (command, decision.reason)


@pytest.mark.parametrize("command", _cases(ALLOWED))
def test_reading_arguments_stay_covered(engine, command: str) -> None:
    decision = engine.decide(call(engine, "run_shell", cmd=command))
    assert decision.effect == "allow", (command, decision.reason)


def test_a_rule_that_names_the_argument_covers_it(co_dirs: Path, tmp_path: Path) -> None:
    rules = [
        {"match": "shell:exec:find * -delete", "effect": "allow"},
        {"match": "shell:exec:sed -i *", "effect": "allow"},
        {"match": "shell:exec:git -c *", "effect": "allow"},
        {"match": "shell:exec:sort -o *", "effect": "allow"},
    ]
    engine = engine_for(tmp_path, user_rules=rules)
    for command in ["find . -name '*.pyc' -delete", "sed -i s/a/b/ x", "git -c x=y log"]:
        assert engine.decide(call(engine, "run_shell", cmd=command)).effect == "allow", command
    # ...and only where it names it: -o here is the option, elsewhere it is not named
    assert engine.decide(call(engine, "run_shell", cmd="sort -o out x")).effect == "allow"
    asked = engine.decide(call(engine, "run_shell", cmd="find . -exec rm {} \\; -delete"))
    assert asked.effect == "ask" and "-exec runs a command" in asked.reason


def test_an_exact_approval_names_everything(co_dirs: Path, tmp_path: Path) -> None:
    engine = engine_for(tmp_path, approve=["shell:exec:find . -name x -delete"])
    assert engine.decide(call(engine, "run_shell", cmd="find . -name x -delete")).allowed
    assert not engine.decide(call(engine, "run_shell", cmd="find . -name y -delete")).allowed


def test_the_reason_says_what_the_argument_does_and_which_rule_does_not_name_it(
    engine,
) -> None:
    decision = engine.decide(call(engine, "run_shell", cmd="rg --pre ./x.sh TODO"))
    assert decision.reason == (
        "rg: --pre runs a program on every file it searches, and the rule "
        "'shell:exec:rg *' does not name it"
    )
    assert decision.pending == ("shell:exec:rg --pre ./x.sh TODO",)
