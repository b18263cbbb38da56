"""Tools say what they do and what their arguments are (``register(..., does=, roles=)``).

A tool that declares nothing gets a reading of its signature, permission template and
docstring: shown here on tools whose names are unlike any of Co's own, through the real
plugin host and the JSON schema pydantic-ai builds for them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from co_core import ToolContext, hookimpl
from co_core.agent.assembly.build import load_tools
from co_core.kernel.host import PluginHost
from co_core.kernel.tools import ToolSpec, default_does, params_of
from co_core.testing import run_co, use_plugin


def stash_blurb(
    ctx: ToolContext, shelf: str, blurb: str, copies: int = 1, loud: bool = False
) -> str:
    """Put a blurb on a shelf of the pantry."""
    return f"stashed {copies} on {shelf}"


def hunt_crumbs(ctx: ToolContext, crumb: str, basket: int, sieve: str | None = None) -> str:
    """Find crumbs in the baskets."""
    return crumb


def peek_jar(ctx: ToolContext, jar: str, lid: str) -> str:
    """What is in a jar, under which lid."""
    return jar


def ring_bell(ctx: ToolContext, tune: str) -> str:
    """Ring the bell with a tune."""
    return tune


def tick_chore(ctx: ToolContext, slot: int) -> str:
    """Tick a chore off."""
    return str(slot)


class Pantry:
    """A plugin declaring nothing but risks and keys."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(stash_blurb, risk="write", permission="pantry:stash:{shelf}")
        register(hunt_crumbs, risk="read", permission="pantry:hunt")
        register(peek_jar, risk="read", permission="pantry:peek")
        register(ring_bell, risk="send", permission="pantry:ring")
        register(tick_chore, risk="write", permission="pantry:tick")


class Declared:
    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(
            stash_blurb,
            risk="write",
            permission="pantry:stash:{shelf}",
            does="writes",
            roles={"shelf": "target", "blurb": "content"},
        )


def _roles(app: Any) -> dict[str, tuple[str, dict[str, str]]]:
    specs: dict[str, ToolSpec] = {s.name: s for s in app.host.tools()}
    out = {}
    for tool in load_tools(app.host, lambda message: None):
        spec, tool_def = specs[tool.name], tool.tool_def
        if spec.plugin == "core":  # Co's own remember tool, beside the plugin's
            continue
        doc = tool_def.description or ""
        params = params_of(tool_def.parameters_json_schema)
        out[tool.name] = (spec.what_it_does(doc), spec.roles_of(params, doc))
    return out


def test_undeclared_tools_get_roles_read_from_their_signature(co_dirs: Path) -> None:
    with use_plugin(Pantry(), name="pantry") as app:
        roles = _roles(app)
    assert roles == {
        # the key names the shelf: what it acts on; the other required string is the text
        "stash_blurb": (
            "writes",
            {"shelf": "target", "blurb": "text", "copies": "option", "loud": "option"},
        ),
        # "Find ..." searches: its string is what to look for, its number picks an item
        "hunt_crumbs": ("searches", {"crumb": "query", "basket": "number", "sieve": "option"}),
        # any other read: the first string names the thing read, the next is a query
        "peek_jar": ("reads", {"jar": "target", "lid": "query"}),
        "ring_bell": ("sends", {"tune": "text"}),
        "tick_chore": ("writes", {"slot": "number"}),
    }


def test_declared_roles_win_and_unnamed_arguments_are_options(co_dirs: Path) -> None:
    with use_plugin(Declared(), name="pantry") as app:
        roles = _roles(app)
    assert roles["stash_blurb"] == (
        "writes",
        {"shelf": "target", "blurb": "content", "copies": "option", "loud": "option"},
    )


@pytest.mark.parametrize(
    ("declared", "error"),
    [
        ({"roles": {"shelf": "thing"}}, "argument 'shelf' has role 'thing'; roles are target,"),
        ({"roles": ["shelf"]}, "roles must map argument names to roles"),
        ({"does": "cooks"}, "does must be one of lists, searches, reads, writes, sends, runs"),
        ({"does": "lists"}, "a tool that lists has risk 'read', not 'write'"),
        ({"does": "sends"}, "a tool that sends has risk 'send', not 'write'"),
    ],
)
def test_a_bad_declaration_skips_the_plugin_with_one_line(
    co_dirs: Path, declared: dict[str, Any], error: str
) -> None:
    messages: list[str] = []
    host = PluginHost(warn=messages.append)

    class Bad:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(stash_blurb, risk="write", **declared)

    host.register(Bad(), "bad")
    assert host.tools() == []
    assert len(messages) == 1 and error in messages[0], messages
    assert messages[0].startswith("plugin 'bad' raised in register_tools and was skipped: ")


def test_default_does_reads_the_risk_then_the_first_word() -> None:
    assert default_does("read", "List the jars.") == "lists"
    assert default_does("read", "Search the pantry for words.") == "searches"
    assert default_does("read", "Read a jar's label.") == "reads"
    assert default_does("exec", "List files by running ls.") == "runs"  # the risk decides
    assert default_does(None) == "runs"  # undeclared risk: the riskiest


def test_co_plugins_json_shows_what_each_bundled_tool_declares(co_dirs: Path) -> None:
    listed = {p["name"]: p for p in json.loads(run_co("plugins", "--json").stdout)}
    shell = listed["shell"]["tool_roles"]
    assert shell["write_file"] == {
        "risk": "write",
        "permission": "fs:write:{path}",
        "does": "writes",
        "does_declared": True,
        "roles": {"path": "target", "content": "content"},
    }
    assert listed["obsidian"]["tool_roles"]["search_notes"]["roles"] == {"query": "query"}
    for plugin in ("shell", "obsidian", "google", "slack"):
        for name, contract in listed[plugin]["tool_roles"].items():
            assert contract["does_declared"], f"{plugin}'s {name} declares no does"
            assert contract["roles"] is not None or name == "list_slack_channels", name


def test_every_bundled_role_names_a_real_argument(co_dirs: Path) -> None:
    from co_core.testing import make_app

    app = make_app()
    specs = {s.name: s for s in app.host.tools()}
    for tool in load_tools(app.host, lambda message: None):
        spec = specs[tool.name]
        names = {p.name for p in params_of(tool.tool_def.parameters_json_schema)}
        assert set(spec.roles or {}) <= names, f"{tool.name}: {set(spec.roles or {}) - names}"


def test_roles_naming_no_argument_are_said_once(co_dirs: Path) -> None:
    class Typo:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(ring_bell, risk="send", roles={"tone": "text", "tune": "text"})

    said: list[str] = []
    with use_plugin(Typo(), name="typo") as app:
        tools = load_tools(app.host, said.append)
    assert [t.name for t in tools if t.name != "remember"] == [
        "ring_bell"
    ]  # still works (remember: core's own)
    assert said == [
        "tool 'ring_bell' of plugin 'typo' declares roles for arguments it does not take: tone"
    ]
