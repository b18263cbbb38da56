"""``run_python`` runs exactly the code that was approved, and nothing from the workspace.

Through Co's real agent, policy gate and both sandboxes: a script rewritten by a real
concurrent process while it is decided, approved and run never runs unapproved code; the
bytes that run are the bytes hashed (checked on generated scripts, large ones and
multi-byte text across argument boundaries included); a module planted in the workspace
(``json.py``, ``sitecustomize.py``, a helper beside the script) is not imported unless the
user's setting says so.
"""

from __future__ import annotations

import hashlib
import os
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo
from shell_testlib import chown_tree, fixture_workspace, sandbox_settings

from co_core.testing import Approvals, make_app, run_turn, script_calls

SANDBOXES = ["docker", "bubblewrap"]
BENIGN = "print('benign run')\n"
EVIL = "open('PWNED', 'w').write('x')\nprint('evil run')\n"


workspace = pytest.fixture(fixture_workspace)


def app_for(backend: str, workspace: Path, **shell: Any) -> Any:
    return make_app({"shell": sandbox_settings(backend, timeout=30, **shell)}, cwd=workspace)


def key_of(path: str, content: str, args: list[str] | None = None) -> str:
    data = content.encode() + (b"\0" + b"\0".join(a.encode() for a in args) if args else b"")
    return f"python:run:{path} sha256={hashlib.sha256(data).hexdigest()[:16]}"


def all_at_once(*calls: tuple[str, dict[str, Any]]) -> Any:
    relay = script_calls()

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not any(isinstance(m, ModelResponse) for m in messages):
            return ModelResponse(parts=[ToolCallPart(tool, dict(args)) for tool, args in calls])
        return relay(messages, info)

    return script


class Rewriter:
    """A real concurrent process flipping a file between two contents every few ms, each
    time whole (written aside, renamed over it), so every read sees one of the two."""

    def __init__(self, path: Path, contents: tuple[str, str]) -> None:
        self.path, self.contents = path, contents
        self.stop = threading.Event()
        self.flips = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        spare = self.path.with_name(".next")
        while not self.stop.is_set():
            for content in self.contents:
                spare.write_text(content)
                if os.getuid() == 0:
                    os.chown(spare, 1000, 1000)
                os.replace(spare, self.path)
                self.flips += 1
                time.sleep(0.002)

    def __enter__(self) -> Rewriter:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


@pytest.mark.parametrize("backend", SANDBOXES)
def test_a_script_rewritten_while_it_is_approved_never_runs_unapproved_code(
    co_dirs: Path, workspace: Path, backend: str
) -> None:
    script = workspace / "job.py"
    script.write_text(BENIGN)
    chown_tree(workspace)
    approved = key_of("job.py", BENIGN)
    desk = Approvals(lambda call: call.permission_key == approved)  # the user says yes to BENIGN
    app = app_for(backend, workspace)
    ran = 0
    with Rewriter(script, (BENIGN, EVIL)) as rewriter:
        for _ in range(6):
            turn = run_turn(
                app, "go", all_at_once(*[("run_python", {"path": "job.py"})] * 4), approvals=desk
            )
            ran += turn.output.count("benign run")
            assert "evil run" not in turn.output
            assert not (workspace / "PWNED").exists()
    assert rewriter.flips > 50  # the file really was changing all along
    assert ran > 0  # and approved runs did happen meanwhile


@pytest.mark.parametrize("backend", SANDBOXES)
def test_the_bytes_that_run_are_the_bytes_that_were_hashed(
    co_dirs: Path, workspace: Path, backend: str
) -> None:
    """Generated scripts whose output depends on every byte of them: what runs prints the
    digest of a payload the key's hash covers, across argument-size boundaries."""
    rng = random.Random(26)
    calls, expected = [], []
    for i, size in enumerate([10, 5_000, 99_999, 100_001, 250_000]):
        alphabet = "abcé€😀\\'\"\t{}" if i % 2 else "xyz0123456789 "
        payload = "".join(rng.choice(alphabet) for _ in range(size))
        body = f"import hashlib, sys\nDATA = {payload!r}\nprint(hashlib.sha256(DATA.encode()).hexdigest(), sys.argv[1:], __file__)\n"
        name = f"gen{i}.py"
        (workspace / name).write_text(body, encoding="utf-8")
        calls.append(("run_python", {"path": name, "args": ["a b", f"-{i}"]}))
        digest = hashlib.sha256(payload.encode()).hexdigest()
        expected.append(f"{digest} ['a b', '-{i}'] /workspace/{name}")
    chown_tree(workspace)
    turn = run_turn(app_for(backend, workspace), "go", script_calls(*calls), approvals=True)
    for line in expected:
        assert line in turn.output
    keys = [c["permission"] for c in turn.calls]
    for (_, args), key in zip(calls, keys, strict=True):
        content = (workspace / args["path"]).read_text(encoding="utf-8")
        assert key == key_of(args["path"], content, args["args"])


PLANTS = {
    "json.py": "open('PWNED-json', 'w').write('x')\nraise SystemExit('planted json')\n",
    "sitecustomize.py": "open('PWNED-site', 'w').write('x')\n",
    "usercustomize.py": "open('PWNED-user', 'w').write('x')\n",
    "collections/__init__.py": "open('PWNED-collections', 'w').write('x')\n",
    "tools/helper.py": "open('PWNED-helper', 'w').write('x')\nVALUE = 'planted'\n",
}


@pytest.mark.parametrize("backend", SANDBOXES)
def test_approved_python_imports_nothing_from_the_workspace(
    co_dirs: Path, workspace: Path, backend: str
) -> None:
    for rel, text in PLANTS.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    (workspace / "tools" / "job.py").write_text(
        "import json, collections\ntry:\n    import helper\n    print('helper', helper.VALUE)\n"
        "except ImportError:\n    print('no helper')\nprint(json.dumps({'ok': 1}))\n"
    )
    chown_tree(workspace)
    snippet = "import json, collections, sys; print(json.dumps([1]), sys.path[0] != '')"
    turn = run_turn(
        app_for(backend, workspace),
        "go",
        script_calls(("run_python", {"code": snippet}), ("run_python", {"path": "tools/job.py"})),
        approvals=True,
    )
    assert [c["status"] for c in turn.calls] == ["ok", "ok"], turn.output
    assert "[1] True" in turn.output and '{"ok": 1}' in turn.output and "no helper" in turn.output
    assert sorted(p.name for p in workspace.rglob("PWNED*")) == []


@pytest.mark.parametrize("backend", SANDBOXES)
def test_the_workspace_imports_setting_puts_them_back(
    co_dirs: Path, workspace: Path, backend: str
) -> None:
    (workspace / "tools").mkdir()
    (workspace / "tools" / "helper.py").write_text("VALUE = 'beside the script'\n")
    (workspace / "mine.py").write_text("VALUE = 'in the workspace'\n")
    (workspace / "tools" / "job.py").write_text(
        "import helper, sys\nprint(helper.VALUE, sys.argv[0])\n"
    )
    chown_tree(workspace)
    turn = run_turn(
        app_for(backend, workspace, python_workspace_imports=True),
        "go",
        script_calls(
            ("run_python", {"path": "tools/job.py"}),
            ("run_python", {"code": "import mine; print(mine.VALUE)"}),
        ),
        approvals=True,
    )
    assert "beside the script ./tools/job.py" in turn.output
    assert "in the workspace" in turn.output


@pytest.mark.parametrize("what", ["path", "code"])
def test_a_yes_for_some_arguments_does_not_cover_others(
    co_dirs: Path, workspace: Path, what: str
) -> None:
    (workspace / "deploy.py").write_text("import sys\nprint('deploying', sys.argv[1:])\n")
    chown_tree(workspace)
    source = {"path": "deploy.py"} if what == "path" else {"code": "import sys; print(sys.argv)"}
    desk = Approvals(True, scope="session")
    turn = run_turn(
        app_for("bubblewrap", workspace),
        "go",
        script_calls(
            ("run_python", {**source, "args": ["--dry-run"]}),
            ("run_python", {**source, "args": ["--dry-run"]}),
            ("run_python", {**source, "args": ["--prod"]}),
        ),
        approvals=desk,
    )
    keys = [c["permission"] for c in turn.calls]
    assert keys[0] == keys[1] != keys[2]
    assert len(desk.asked) == 2  # the same arguments were covered, new ones were asked


def test_code_and_path_together_are_refused_before_anything_runs(
    co_dirs: Path, workspace: Path
) -> None:
    (workspace / "job.py").write_text(BENIGN)
    chown_tree(workspace)
    turn = run_turn(
        app_for("bubblewrap", workspace),
        "go",
        script_calls(("run_python", {"path": "job.py", "code": EVIL})),
        approvals=True,
    )
    assert turn.calls[0]["status"] == "retry" and "not both" in turn.output
    assert not (workspace / "PWNED").exists()
