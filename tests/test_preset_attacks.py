"""Issue 35's attacks on the read-only preset, by family: with nothing but the preset on,
each is asked about, as a ``run_shell_command`` call resolved by co-shell; the forms the
table lists keep running unasked, read-only. (What they do when they run is
tests/test_preset_kernel.py's.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import preset_attacks
import pytest

from co_core.policy import PolicyEngine
from co_core.testing import make_app


@pytest.fixture(scope="module")
def decide(tmp_path_factory: pytest.TempPathFactory) -> Any:
    workspace = tmp_path_factory.mktemp("ws")
    (workspace / "x").write_text("x\n")
    app = make_app(
        {"policy": {"presets": ["read-only"]}, "shell": {"sandbox": "none"}}, cwd=workspace
    )
    engine = PolicyEngine.from_app(app, workspace=workspace, audit=False)
    deps = app.make_deps(workspace)

    def decision(command: str) -> Any:
        return engine.decide(engine.make_call("run_shell_command", {"cmd": command}, deps))

    yield decision
    deps.close()


@pytest.mark.parametrize("family", list(preset_attacks.FAMILIES))
def test_every_attack_of_the_family_is_asked_about(decide: Any, family: str) -> None:
    commands = preset_attacks.FAMILIES[family]
    through = [c for c in commands if decide(c).effect == "allow"]
    assert through == [], f"{family}: {len(commands) - len(through)}/{len(commands)} held"


def test_the_forms_the_table_lists_run_unasked_and_read_only(decide: Any) -> None:
    wrong = []
    for command in preset_attacks.BENIGN:
        decision = decide(command)
        if not (decision.allowed and decision.read_only):
            wrong.append(f"{command!r}: {decision.effect} ({decision.reason})")
    assert wrong == []


def test_each_asked_attack_says_why_in_words(decide: Any) -> None:
    """The reason is a sentence about the command, never a bare rule pattern."""
    for commands in preset_attacks.FAMILIES.values():
        for command in commands:
            reason = decide(command).reason
            assert len(reason.split()) >= 4 and "Traceback" not in reason, (command, reason)


def test_the_corpus_is_the_issues(tmp_path: Path) -> None:
    """The issue's own examples are in the corpus, word for word."""
    issue = [
        "sed --expr='1e touch PWNED' x", "sed --e='w PWNED' x", "env --ch=tools git status",
        "file --comp -m x", "sed -n 'w PWNED' x -- --sandbox", "env -iC tools ls",
        "printf -v'a[$(touch PWNED)]' x", "uniq -- -z PWNED",
        "xargs -a /dev/null --process-slot-var=LD_LIBRARY_PATH ls",
        "sed -n 's/[/]/x/;w PWNED' x", "sed ':a e touch PWNED' x", "sed -n 'ba w PWNED' x",
        "sed 'v 4.2 e touch PWNED' x",
    ]  # fmt: skip
    corpus = {c for commands in preset_attacks.FAMILIES.values() for c in commands}
    assert [c for c in issue if c not in corpus] == []
