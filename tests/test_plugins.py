"""Plugin discovery and isolation, through real entry points in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from co_core.testing import install_fake_plugin, run_co

BUNDLED = {"google", "obsidian", "shell", "slack"}


def plugins_json(**env: str) -> dict[str, dict]:
    result = run_co("plugins", "--json", env=env)
    assert result.returncode == 0, result.stderr
    return {p["name"]: p for p in json.loads(result.stdout)}


def test_bundled_plugins_are_discovered(co_dirs: Path) -> None:
    plugins = plugins_json()
    assert BUNDLED <= set(plugins)
    for name in BUNDLED:
        assert plugins[name]["status"] == "loaded"
        assert plugins[name]["version"]
        assert "register_settings" in plugins[name]["hooks"]


def test_plugin_that_fails_to_import_is_named_and_skipped(co_dirs: Path, site: Path) -> None:
    install_fake_plugin(site, "broken", "raise ImportError('needs libfoo')\n")
    result = run_co("plugins", "--json")
    assert result.returncode == 0
    warnings = [line for line in result.stderr.splitlines() if "broken" in line]
    assert warnings == [
        "co: warning: plugin 'broken' failed to load and was skipped: ImportError: needs libfoo"
    ]
    plugins = {p["name"]: p for p in json.loads(result.stdout)}
    assert plugins["broken"]["status"] == "failed"
    assert all(plugins[name]["status"] == "loaded" for name in BUNDLED)
    # The rest of Co keeps working with the broken plugin installed.
    status = run_co("status", "--json")
    rows = {row["name"]: row for row in json.loads(status.stdout)}
    assert rows["plugin broken"]["state"] == "fail"
    assert rows["settings"]["state"] == "ok"


def test_plugin_raising_in_a_hook_is_skipped_not_fatal(co_dirs: Path, site: Path) -> None:
    install_fake_plugin(
        site,
        "grumpy",
        """
        from co_core import hookimpl

        @hookimpl
        def register_tools(register):
            register("co_fake_grumpy:tool_a", risk="read")
            raise RuntimeError("boom in hook")
        """,
    )
    result = run_co("plugins", "--json")
    assert result.returncode == 0
    assert (
        "plugin 'grumpy' raised in register_tools and was skipped: RuntimeError: boom in hook"
        in result.stderr
    )
    plugins = {p["name"]: p for p in json.loads(result.stdout)}
    assert plugins["grumpy"]["status"] == "failed"
    assert plugins["grumpy"]["tools"] == []  # what it half-registered is dropped


def test_tools_are_listed_without_importing_them(co_dirs: Path, site: Path) -> None:
    # The tool module would explode on import: listing must not touch it.
    (site / "co_fake_lazy_tools.py").write_text("raise SystemExit('imported!')\n")
    install_fake_plugin(
        site,
        "lazy",
        """
        from co_core import hookimpl

        @hookimpl
        def register_tools(register):
            register("co_fake_lazy_tools:look", risk="read", permission="lazy:read:{what}")
            register("co_fake_lazy_tools:poke", risk="exec")
        """,
    )
    result = run_co("plugins", "--json")
    assert result.returncode == 0, result.stderr
    plugins = {p["name"]: p for p in json.loads(result.stdout)}
    assert plugins["lazy"]["tools"] == ["look", "poke"]
    table = run_co("plugins")
    assert "look, poke" in table.stdout


def test_CO_LOAD_PLUGINS_selects_plugins(co_dirs: Path) -> None:
    plugins = plugins_json(CO_LOAD_PLUGINS="slack,obsidian")
    loaded = {name for name, p in plugins.items() if p["status"] == "loaded"}
    assert loaded == {"slack", "obsidian"}
    assert plugins["shell"]["status"] == "disabled"
    none_loaded = plugins_json(CO_LOAD_PLUGINS="")
    assert all(p["status"] == "disabled" for p in none_loaded.values())


def test_disabled_plugins_setting_blocks_plugins(co_dirs: Path) -> None:
    assert run_co("config", "set", "disabled_plugins", "google,slack").returncode == 0
    plugins = plugins_json()
    assert plugins["google"]["status"] == "disabled"
    assert plugins["slack"]["status"] == "disabled"
    assert plugins["shell"]["status"] == "loaded"
    # A disabled plugin's settings section is gone, and its stale keys are no error.
    show = run_co("config", "show", "--json")
    assert show.returncode == 0, show.stderr
    assert "slack.bot_token" not in json.loads(show.stdout)


def test_plugins_table_shows_failure_reason(co_dirs: Path, site: Path) -> None:
    install_fake_plugin(site, "broken", "import does_not_exist_anywhere\n")
    result = run_co("plugins")
    assert "broken" in result.stdout
    assert "failed" in result.stdout and "ModuleNotFoundError" in result.stdout
