"""The compatibility promise: old plugins keep loading, too-new plugins get a clear message.

Plugins are installed for real (entry points on PYTHONPATH) and Co runs in a subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from co_core import HOOKSPEC_VERSION
from co_core.kernel.hookspecs import HOOKSPEC_VERSION as SPEC_VERSION
from co_core.kernel.tools import ToolCall
from co_core.testing import install_fake_plugin, make_app, run_co

OLD = """
# docs: fewer_args
from co_core import hookimpl

CO_HOOKSPEC_VERSION = 1  # written for the first hookspec: loads on every later Co


@hookimpl
def register_tools(register):
    register("os.path:basename", risk="read", name="base")


@hookimpl
def approval_policy(call):  # the spec also offers settings: taking fewer is fine
    return "deny" if call.tool == "base" else None


@hookimpl
def system_instructions():  # takes nothing at all
    return "old but fine"
# /docs
"""

FUTURE = """
from co_core import hookimpl

CO_HOOKSPEC_VERSION = 99

@hookimpl
def register_tools(register):
    raise AssertionError("never called: the plugin is skipped before its hooks run")
"""

NEW_ARGUMENT = """
from co_core import hookimpl

@hookimpl
def approval_policy(call, settings, conversation):   # 'conversation' is not in this Co
    return None
"""

NEW_HOOK = """
from co_core import hookimpl

@hookimpl
def register_widgets(register):     # a hook this Co does not have: simply never called
    register("clock")

@hookimpl
def system_instructions(settings):
    return "I also know widgets"
"""


def installed(monkeypatch: pytest.MonkeyPatch, site: Path, *names: str) -> None:
    """Make the fake plugins in ``site`` visible in this process too, and only them."""
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("CO_LOAD_PLUGINS", ",".join(names))


def listed() -> dict[str, dict]:
    result = run_co("plugins", "--json")
    assert result.returncode == 0, result.stderr
    return {p["name"]: p for p in json.loads(result.stdout)}


def test_version_is_public() -> None:
    assert HOOKSPEC_VERSION == SPEC_VERSION >= 1


def test_plugin_for_an_older_hookspec_keeps_loading(
    co_dirs: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_fake_plugin(site, "old", OLD)
    installed(monkeypatch, site, "old")
    assert listed()["old"]["status"] == "loaded"
    app = make_app()
    call = ToolCall("base", "old", {}, "old:base", "read")
    opinions = dict(app.host.call_each("approval_policy", call=call, settings=app.settings))
    assert opinions["old"] == "deny"
    assert dict(app.host.call_each("system_instructions", settings=app.settings))["old"] == (
        "old but fine"
    )


def test_plugin_needing_a_newer_co_is_named_and_skipped(co_dirs: Path, site: Path) -> None:
    install_fake_plugin(site, "future", FUTURE)
    install_fake_plugin(site, "old", OLD)
    result = run_co("plugins", "--json")
    assert result.returncode == 0
    assert result.stderr == (
        f"co: warning: plugin 'future' is incompatible and was skipped: it needs Co hookspec "
        f"version 99, this co-core has version {SPEC_VERSION}: upgrade co-core "
        "(pip install -U co-core)\n"
    )
    guide = (Path(__file__).parents[1] / "docs" / "plugins.md").read_text(encoding="utf-8")
    assert result.stderr in guide  # the guide shows the message exactly as Co prints it
    plugins = {p["name"]: p for p in json.loads(result.stdout)}
    assert plugins["future"]["status"] == "failed"
    assert plugins["future"]["error"].startswith("it needs Co hookspec version 99")
    assert plugins["old"]["status"] == "loaded"  # everything else keeps working
    table = run_co("plugins")
    assert "upgrade co-core" in table.stdout and "Traceback" not in table.stderr


def test_hook_argument_from_a_newer_co_is_a_clear_message(co_dirs: Path, site: Path) -> None:
    install_fake_plugin(site, "newarg", NEW_ARGUMENT)
    result = run_co("plugins", "--json")
    assert result.returncode == 0
    warning = result.stderr.strip()
    assert len(warning.splitlines()) == 1
    assert warning.startswith("co: warning: plugin 'newarg' is incompatible and was skipped: ")
    assert warning.endswith(
        "its approval_policy hook takes conversation, which this co-core does not offer "
        f"(hookspec version {SPEC_VERSION}): upgrade co-core (pip install -U co-core)"
    )
    assert {p["name"]: p["status"] for p in json.loads(result.stdout)}["newarg"] == "failed"


def test_unknown_hook_from_a_newer_co_is_ignored(
    co_dirs: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_fake_plugin(site, "widgets", NEW_HOOK)
    installed(monkeypatch, site, "widgets")
    result = run_co("plugins", "--json")
    assert (result.returncode, result.stderr) == (0, "")
    assert {p["name"]: p["status"] for p in json.loads(result.stdout)}["widgets"] == "loaded"
    app = make_app()
    assert dict(app.host.call_each("system_instructions", settings=app.settings)) == {
        "widgets": "I also know widgets"
    }


def test_bad_declared_version_is_a_clear_message(co_dirs: Path, site: Path) -> None:
    install_fake_plugin(site, "typo", "CO_HOOKSPEC_VERSION = '2'\n")
    result = run_co("plugins", "--json")
    assert result.stderr == (
        "co: warning: plugin 'typo' is incompatible and was skipped: "
        "CO_HOOKSPEC_VERSION must be a whole number >= 1, not '2'\n"
    )


def test_plugin_requiring_a_newer_co_core_is_named_and_skipped(co_dirs: Path, site: Path) -> None:
    from importlib.metadata import version

    ok_source = "from co_core import hookimpl\n"
    install_fake_plugin(site, "needy", ok_source, requires=["co-core>=99.0", "httpx"])
    have = version("co-core")
    install_fake_plugin(site, "strict", ok_source, requires=[f"co_core (>{have})"])
    install_fake_plugin(site, "modest", ok_source, requires=["co-core>=0.1,<99", "co-corex>=5"])
    install_fake_plugin(site, "extra", ok_source, requires=['co-core>=99; extra == "dev"'])
    result = run_co("plugins", "--json")
    assert result.returncode == 0
    assert result.stderr.splitlines() == [
        "co: warning: plugin 'needy' is incompatible and was skipped: it requires "
        f"co-core>=99.0, this is co-core {have}: upgrade co-core "
        "(pip install -U co-core)",
        "co: warning: plugin 'strict' is incompatible and was skipped: it requires "
        f"co_core (>{have}), this is co-core {have}: upgrade co-core "
        "(pip install -U co-core)",
    ]
    status = {p["name"]: p["status"] for p in json.loads(result.stdout)}
    assert (status["needy"], status["strict"]) == ("failed", "failed")
    assert (status["modest"], status["extra"]) == ("loaded", "loaded")


def test_registering_a_too_new_plugin_in_a_test_says_why(co_dirs: Path) -> None:
    from co_core.kernel.host import Incompatible
    from co_core.testing import use_plugin

    class Future:
        CO_HOOKSPEC_VERSION = SPEC_VERSION + 1

    with pytest.raises(Incompatible, match=f"needs Co hookspec version {SPEC_VERSION + 1}"):
        with use_plugin(Future()):
            pass
