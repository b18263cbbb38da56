"""``co chat`` in a real terminal: a long Slack post is shown whole, page by page, before
the question, and a yes sends exactly what was shown."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
import pytest
from slack_scripts import LONG_TEXT, TAIL

CO = str(Path(sys.executable).parent / "co")
HERE = str(Path(__file__).parent)


@pytest.fixture
def chat(slack_env, tmp_path, monkeypatch):
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH", "")) if p)
    )
    children: list[pexpect.spawn] = []

    def spawn() -> pexpect.spawn:
        child = pexpect.spawn(
            CO,
            ["chat", "-m", "function:slack_scripts:long_post"],
            env=dict(os.environ),
            cwd=str(tmp_path),
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 120),
        )
        children.append(child)
        child.expect("co>")
        return child

    yield spawn
    for child in children:
        if child.isalive():
            child.terminate(force=True)


def test_a_long_post_is_shown_whole_before_the_question(chat, fake):
    child = chat()
    child.sendline("post the release notes")
    child.expect(r"page 1 of 3")
    seen = child.before
    assert "Allow?" not in seen and "Release note 1:" in seen
    child.sendline("y")  # a yes between pages reads on; it approves nothing yet
    child.expect(r"page 2 of 3")
    seen += child.before
    assert fake.posted == []
    child.sendline("")
    child.expect(r"Allow\?")
    seen += child.before
    for n in range(1, 81):
        assert f"Release note {n}: fixed thing number {n}." in seen
    assert TAIL in seen and "permission: slack:post:#releases" in seen
    assert "(81 lines, " in seen and "folded" not in seen
    child.sendline("y")
    child.expect("Posted to #releases")
    child.expect("co>")
    (post,) = fake.posted
    assert post.params["markdown_text"] == LONG_TEXT
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_a_no_between_pages_stops_the_post(chat, fake):
    child = chat()
    child.sendline("post the release notes")
    child.expect(r"page 1 of 3")
    child.sendline("that is not what I asked for")
    child.expect("co>")
    assert fake.posted == []
    assert "Allow?" not in child.before
