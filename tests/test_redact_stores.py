"""Secrets written through every path reach no file Co writes, in any promised shape.

A turn whose prompt, tool arguments and tool output carry one secret of each family runs
through the real agent, policy, sandbox, audit trail, trace database and session store;
then every file in Co's data and cache folders is read as bytes (databases, their
write-ahead logs, JSONL) and searched for the secrets. The REPL's input history is checked
the same way through a real pty.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_redact import FAMILIES

from co_core.testing import make_app, run_turn, script_calls

# one secret of each family, and the part of it that must not be on disk
SECRETS = {
    f"{family}-{i}": shape for family, shapes in FAMILIES.items() for i, shape in enumerate(shapes)
}


def _tell(secret: str) -> str:
    """The part of a secret that gives it away (a URL's password, a token's tail)."""
    if "hunter2" in secret:
        return "hunter2"
    return secret.split()[-1][-12:]


def _files_holding(folders: list[Path], needles: dict[str, str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for folder in folders:
        for path in folder.rglob("*"):
            if not path.is_file():
                continue
            data = path.read_bytes()
            for name, needle in needles.items():
                if needle.encode() in data:
                    found.setdefault(name, []).append(str(path.relative_to(folder.parent)))
    return found


@pytest.mark.parametrize("content", [False, True], ids=["traces", "traces-with-content"])
def test_no_store_holds_a_secret(co_dirs: Path, tmp_path: Path, content: bool) -> None:
    from shell_testlib import make_workspace

    workspace = make_workspace()
    try:
        _no_store_holds_a_secret(workspace, co_dirs, content)
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def _no_store_holds_a_secret(workspace: Path, co_dirs: Path, content: bool) -> None:
    from shell_testlib import chown_tree

    chown_tree(workspace)
    names = sorted(SECRETS)
    words = " ".join(SECRETS[n] for n in names)
    app = make_app(
        {"shell": {"sandbox": "bubblewrap"}, "telemetry": {"include_content": content}},
        cwd=workspace,
    )
    script = script_calls(
        (
            "run_shell_command",
            {"cmd": "printf '%s\\n' " + " ".join(f"'{SECRETS[n]}'" for n in names)},
        ),
        ("write_file", {"path": "notes.txt", "content": words}),
        answer=f"done: {words}",
    )
    turn = run_turn(app, f"use these: {words}", script, approvals=True)
    assert [c["status"] for c in turn.calls][0] == "ok"
    data = co_dirs.parent / "co-data"
    assert (data / "audit").is_dir() and any(data.glob("sessions*")), sorted(data.iterdir())
    assert any(data.glob("traces*")), sorted(data.iterdir())
    leaks = _files_holding(
        [data, co_dirs.parent / "co-cache"], {n: _tell(SECRETS[n]) for n in names}
    )
    assert leaks == {}, leaks


def test_the_repl_history_file_holds_no_secret(chat, tmp_path: Path) -> None:
    import pexpect

    child = chat()
    picked = {n: s for n, s in SECRETS.items() if n.endswith("-0") or "url" in n}
    for secret in picked.values():
        child.sendline(f"remember {secret} please")
        child.expect(r"\(turn \d+\)")
        child.expect("co>")
    child.sendline("exit")
    child.expect(pexpect.EOF)
    history = (tmp_path / "co-data" / "history").read_bytes()
    assert b"remember" in history  # the lines are there, masked
    leaks = [n for n, s in picked.items() if _tell(s).encode() in history]
    assert leaks == [], leaks
