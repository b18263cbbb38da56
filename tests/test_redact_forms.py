"""Masking checked on disk: every documented secret, in every setting a user meets it.

``secret_forms`` puts each shape of each family into each form (after ``%3D``, ``_`` or a
letter, URL-encoded, JSON-escaped, base64, split over two lines, in a URL's password, in
an error message, in a permission key...). Each form is masked as text; then the forms
travel through every path Co writes them by (the prompt, a plugin tool's arguments and
result, a tool's error, a shell command's output, an MCP server's result, the answer,
``co ask --json``, the REPL's input, the local model's log) and every file in Co's data
and cache folders is read as bytes and searched for any run of any secret.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from llama_support import NEEDS_SMOLLM2
from mcp_support import sdk_server
from secret_forms import FORMS, cases, leaked, sample, shapes

from co_core import ModelRetry, ToolContext, hookimpl
from co_core.kernel.redact import Redactor
from co_core.testing import make_app, run_turn, script_calls

SHAPES = dict(shapes())


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_secret_is_masked_in_this_form(form: str) -> None:
    redactor = Redactor()
    leaks = []
    for name, shape in SHAPES.items():
        text = FORMS[form](shape)
        found = leaked(redactor.text(text), shape)
        if found:
            leaks.append((name, found, text))
    assert leaks == [], leaks[:3]


def _ordinary(rng: random.Random) -> str:
    """Text that holds the prefixes of secrets inside ordinary words and ids."""
    words = ["task", "risk", "desk", "disk", "work", "bookmark", "english", "single", "graph"]
    words += ["list", "item", "renderer", "report", "final", "backup", "environment", "api"]
    words += ["org", "npm", "config", "hf", "live", "test", "token", "xox", "AIza", "ghp"]
    joints = ["-", "_", "", ".", "/"]
    parts = [rng.choice(words) for _ in range(rng.randint(2, 7))]
    text = parts[0]
    for part in parts[1:]:
        text += rng.choice(joints) + part
    if rng.random() < 0.3:
        text += rng.choice(["-2024", "_v2", "-final3"])
    return text


def test_text_that_only_holds_the_prefixes_of_secrets_stays() -> None:
    import base64
    import hashlib
    import uuid
    from urllib.parse import quote

    rng = random.Random(5)
    texts = [_ordinary(rng) for _ in range(3000)]
    texts += [hashlib.sha256(str(i).encode()).hexdigest() for i in range(50)]
    texts += [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(50)]
    texts += [base64.b64encode(t.encode() * 3).decode() for t in texts[:50]]
    texts += [quote(f"{t} = {t}", safe="") for t in texts[:50]]
    texts += ["line one of a log\nline two of a log\\n\tindented", "C:\\new\\temp\\x41"]
    redactor = Redactor()
    changed = [(t, redactor.text(t)) for t in texts if redactor.text(t) != t]
    assert len(changed) <= len(texts) // 200, changed[:10]  # over-masking, rare and accepted


class Stash:
    """A test plugin whose tools carry what they are given into their result and errors."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(stash_blob, risk="read", permission="stash:blob")
        register(fail_loudly, risk="read", permission="stash:fail")
        register(crash_loudly, risk="read", permission="stash:crash")


def stash_blob(ctx: ToolContext, payload: str) -> str:
    """Keep a blob; returns it."""
    return f"stashed: {payload}"


def fail_loudly(ctx: ToolContext, detail: str) -> str:
    """Always asks to be called again, quoting what it was given."""
    raise ModelRetry(f"upstream refused the request: {detail}")


def crash_loudly(ctx: ToolContext, detail: str) -> str:
    """Always fails, quoting what it was given."""
    raise RuntimeError(f"upstream crashed on: {detail}")


def _files_leaking(folders: list[Path], texts: dict[str, str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                for key, shape in texts.items():
                    tell = leaked(data, shape)
                    if tell:
                        found.setdefault(f"{path.name}: {key}", []).append(tell)
    return found


def _stores(co_dirs: Path) -> list[Path]:
    return [co_dirs.parent / "co-data", co_dirs.parent / "co-cache"]


@pytest.mark.parametrize("half", [0, 1])
def test_no_store_holds_a_secret_in_any_form(co_dirs: Path, tmp_path: Path, half: int) -> None:
    from shell_testlib import chown_tree, make_workspace

    chosen = [c for i, c in enumerate(cases()) if i % 2 == half]
    texts = {f"{name} {form}": text for name, form, text in chosen}
    blob = "\n\n".join(texts.values())
    workspace = make_workspace()
    try:
        chown_tree(workspace)
        (workspace / "blob.txt").write_text(blob)
        chown_tree(workspace)
        app = make_app(
            {
                "shell": {"sandbox": "bubblewrap"},
                "telemetry": {"include_content": True},
                "mcp_servers": {"echoer": sdk_server()},
            },
            cwd=workspace,
        )
        app.host.register(Stash(), "stash")
        script = script_calls(
            ("stash_blob", {"payload": blob}),
            ("fail_loudly", {"detail": blob}),
            ("run_shell_command", {"cmd": "cat blob.txt"}),
            ("echoer_echo", {"text": blob}),
            answer=lambda seen: "here is all of it:\n" + "\n".join(seen),
        )
        turn = run_turn(app, f"keep these safe:\n{blob}", script, approvals=True)
        crash = script_calls(("crash_loudly", {"detail": blob}))
        with pytest.raises(Exception, match="upstream crashed"):
            run_turn(app, "once more", crash, approvals=True)
    finally:
        import shutil

        shutil.rmtree(workspace, ignore_errors=True)
    assert [c["status"] for c in turn.calls] == ["ok", "retry", "ok", "ok"], turn.calls
    data = co_dirs.parent / "co-data"
    assert any(data.glob("traces*")) and any(data.glob("sessions*")) and (data / "audit").is_dir()
    shaped = {key: SHAPES[key.split()[0]] for key in texts}
    assert _files_leaking(_stores(co_dirs), shaped) == {}


@pytest.mark.usefixtures("testplug")
def test_co_ask_json_stores_no_secret(co_dirs: Path, tmp_path: Path) -> None:
    """``co ask --json`` with secrets in the prompt, a tool's arguments and its result."""
    picked = sample(200, seed=7)
    blob = "\n".join(text for _, _, text in picked)
    call = json.dumps({"query": blob})
    done = subprocess.run(
        [sys.executable, "-m", "co_core", "ask", "--json", "-m", "function:co_scripts:chat"]
        + [f"call lookup {call}"],
        capture_output=True, text=True, timeout=180, cwd=tmp_path, env=dict(os.environ),
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tool_calls"][0]["status"] == "ok"
    shaped = {f"{n} {f}": SHAPES[n] for n, f, _ in picked}
    assert _files_leaking(_stores(co_dirs), shaped) == {}


def test_the_repl_history_holds_no_secret_in_any_form(chat: Any, tmp_path: Path) -> None:
    import pexpect

    child = chat()
    picked = [c for c in sample(40, seed=11) if "\n" not in c[2] and "\r" not in c[2]]
    for _, _, text in picked:
        child.sendline(f"remember {text} please")
        child.expect(r"\(turn \d+\)")
        child.expect("co>")
    child.sendline("exit")
    child.expect(pexpect.EOF)
    history = (tmp_path / "co-data" / "history").read_bytes()
    assert history.count(b"remember") == len(picked)
    leaks = [(n, f) for n, f, _ in picked if leaked(history, SHAPES[n])]
    assert leaks == [], leaks


@pytest.mark.usefixtures("co_dirs")
def test_the_local_model_log_holds_no_secret(tmp_path: Path) -> None:
    """llama.cpp prints a grammar it cannot parse to its log; Co's grammars hold the user's
    words. What reaches ``local-model.log`` is masked."""
    import httpx
    from llama_support import smollm2_server

    picked = [(n, f, t) for n, f, t in sample(80, seed=3) if not set('"\\\n\r') & set(t)]
    words = " ".join(t for _, _, t in picked)
    data = tmp_path / "llama-data"
    data.mkdir()
    with smollm2_server(data) as url:
        grammar = f'root ::= "{words}" | ( unclosed'
        request = {"messages": [{"role": "user", "content": words}], "max_tokens": 4}
        try:
            httpx.post(f"{url}/chat/completions", json={**request, "grammar": grammar}, timeout=120)
        except httpx.HTTPError:
            pass  # the server may drop the request it cannot serve
    log = (data / "local-model.log").read_bytes()
    assert b"error parsing grammar" in log  # it did print the grammar it could not parse
    leaks = [(n, f) for n, f, _ in picked if leaked(log, SHAPES[n])]
    assert leaks == [], leaks


for _mark in NEEDS_SMOLLM2:
    test_the_local_model_log_holds_no_secret = _mark(test_the_local_model_log_holds_no_secret)
