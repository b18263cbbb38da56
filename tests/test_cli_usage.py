"""Every ``co`` command's usage line names its arguments plainly (issue 36.7): ``KEY``,
``[FOLDER]``, never Typer's ``{key}``, which reads as something to type, braces and all."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer

from co_core.cli.main import build, plain_usage
from co_core.kernel.app import load_app
from co_core.testing import run_co


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_no_usage_line_has_braces(co_dirs: Any) -> None:
    command = plain_usage(typer.main.get_command(build(load_app())))
    checked = 0
    for path, sub in _commands(command):
        ctx = sub.context_class(sub, info_name=" ".join(("co", *path)))
        usage = sub.get_usage(ctx)
        assert "{" not in usage and "}" not in usage, usage
        for param in sub.params:
            if param.param_type_name == "argument" and param.metavar is None:
                assert re.search(rf"\b{param.name.upper()}\b", usage), (usage, param.name)
                checked += 1
    assert checked >= 10  # policy revoke's KEY, config set's KEY VALUE, trust's [FOLDER], ...


def test_policy_revoke_help_as_a_user_sees_it(co_dirs: Any) -> None:
    shown = run_co("policy", "revoke", "--help")
    assert shown.returncode == 0
    assert "Usage: co policy revoke [OPTIONS] KEY\n" in shown.stdout
