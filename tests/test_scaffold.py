"""``co plugin new``: the generated package installs, passes its own tests and loads in Co.

Exactly what an author does: generate in an empty folder, ``uv pip install -e`` it with
this co-core checkout into a fresh venv, run its tests, then ``co plugins``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from co_core.cli.scaffold import plugin_name, render
from co_core.testing import run_co

ROOT = Path(__file__).resolve().parents[1]


def run(*argv: str | Path, **kw) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=600, **kw
    )
    assert result.returncode == 0, f"{argv}:\n{result.stdout}\n{result.stderr}"
    return result


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CO_", "VIRTUAL_ENV"))}
    env.pop("PYTHONPATH", None)
    env.update(CO_CONFIG_DIR=str(tmp_path / "cfg"), CO_DATA_DIR=str(tmp_path / "data"))
    return env


@dataclass
class Installed:
    root: Path  # the temporary folder everything lives in
    package: Path  # the generated co-weather
    venv: Path
    made: subprocess.CompletedProcess[str]

    def co(self, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
        return run(self.venv / "bin" / "co", *args, env=clean_env(self.root), **kw)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """``co plugin new weather``, then ``uv pip install -e`` it and this co-core into a fresh venv."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed (pip install uv)")
    root = tmp_path_factory.mktemp("author")
    made = run_co("plugin", "new", "weather", cwd=root)
    assert made.returncode == 0, made.stderr
    venv = root / "venv"
    run(uv, "venv", "--quiet", "--python", "3.11", venv)
    package = root / "co-weather"
    python = venv / "bin" / "python"
    run(uv, "pip", "install", "--quiet", "--python", python, "-e", ROOT, "-e", f"{package}[test]")
    return Installed(root, package, venv, made)


@pytest.mark.slow
def test_new_plugin_is_a_complete_package(installed: Installed) -> None:
    package = installed.package
    assert f"Created {package.name}" in installed.made.stdout
    made = sorted(
        p.relative_to(package).as_posix()
        for p in package.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and ".pytest_cache" not in p.parts
    )
    assert made == [
        "README.md",
        "co_weather/__init__.py",
        "co_weather/catalog.py",
        "co_weather/keys.py",
        "co_weather/plugin.py",
        "co_weather/settings.py",
        "co_weather/tools.py",
        "pyproject.toml",
        "tests/test_weather.py",
    ]
    assert "co plugin guide" in installed.made.stdout  # where to read on: a shipped command
    assert "docs/plugins.md (the author guide)" not in installed.made.stdout


@pytest.mark.slow
def test_its_own_tests_pass_out_of_the_box(installed: Installed) -> None:
    tests = subprocess.run(
        [installed.venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=installed.package,
        env=clean_env(installed.root),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert " passed" in tests.stdout and "failed" not in tests.stdout


@pytest.mark.slow
def test_co_lists_it_and_knows_its_settings(installed: Installed) -> None:
    listed = json.loads(installed.co("plugins", "--json").stdout)
    weather = [p for p in listed if p["name"] == "weather"]
    assert weather == [
        {
            "name": "weather",
            "module": "co_weather.plugin",
            "distribution": "co-weather",
            "version": "0.1.0",
            "status": "loaded",
            "error": None,
            "hooks": ["approval_policy", "register_deps", "register_settings", "register_tools"],
            "tools": ["weather_search"],
            "tool_roles": {
                "weather_search": {
                    "risk": "read",
                    "permission": "weather:read:{query}",
                    "does": "searches",
                    "does_declared": True,
                    "roles": {"query": "query"},  # what `co plugin new` writes
                }
            },
        }
    ]
    assert installed.co("config", "get", "weather.max_results").stdout.strip() == "10"


@pytest.mark.slow
def test_its_tool_works_in_co_ask(installed: Installed) -> None:
    (installed.root / "ask_script.py").write_text(
        "from co_core.testing import script_calls, scripted_model\n"
        "model = scripted_model(script_calls(('weather_search', {'query': 'an'})))\n"
    )
    env = {**clean_env(installed.root), "PYTHONPATH": str(installed.root)}
    result = subprocess.run(
        [installed.venv / "bin" / "co", "ask", "--model", "function:ask_script:model", "bananas?"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "- banana\n"  # the default catalog: apple, banana, cherry


def test_existing_folder_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "co-notes").mkdir()
    (tmp_path / "co-notes" / "mine.txt").write_text("keep me")
    result = run_co("plugin", "new", "notes", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().endswith(
        "already exists: pick another name or folder (nothing was written)"
    )
    assert "Traceback" not in result.stderr
    assert [p.name for p in (tmp_path / "co-notes").iterdir()] == ["mine.txt"]


@pytest.mark.parametrize("bad", ["Weather!", "../evil", "1abc", "a--b", "", "co-", "core"])
def test_bad_names_are_one_clear_line(tmp_path: Path, bad: str) -> None:
    result = run_co("plugin", "new", bad, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("co: error: bad plugin name")
    assert len(result.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_missing_target_folder_is_one_clear_line(tmp_path: Path) -> None:
    result = run_co("plugin", "new", "notes", "--dir", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert (result.returncode, result.stderr) == (
        1,
        f"co: error: {tmp_path / 'nowhere'} is not a folder\n",
    )


def test_names_map_to_package_module_and_entry_point() -> None:
    assert plugin_name("co-Team-Wiki") == "team-wiki"
    files = render("team-wiki")
    assert 'name = "co-team-wiki"' in files["pyproject.toml"]
    assert 'team-wiki = "co_team_wiki.plugin"' in files["pyproject.toml"]
    assert "class TeamWikiSettings(SectionModel)" in files["co_team_wiki/settings.py"]
    assert 'permission="team-wiki:read:{query}"' in files["co_team_wiki/plugin.py"]
    assert "$" not in "".join(files.values())  # every placeholder was filled


def test_generated_package_passes_mypy_strict(tmp_path: Path) -> None:
    """What the guide asks of plugins: typed hooks, typed keys, settings by model class."""
    made = run_co("plugin", "new", "team-wiki", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    package = tmp_path / "co-team-wiki"
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir=/dev/null",
            "co_team_wiki",
            "tests",
        ],
        cwd=package,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    plugin = (package / "co_team_wiki" / "plugin.py").read_text()
    assert "Any" not in plugin  # every hook annotated with Co's register types
    assert 'settings.section("team_wiki")' not in plugin  # read by model class
    tools = (package / "co_team_wiki" / "tools.py").read_text()
    assert "resource(CATALOG)" in tools and "pydantic_ai" not in tools


def test_the_guides_example_passes_mypy_strict() -> None:
    """co-todo, as the guide builds it, is typed through Co's public API, tests included
    (``Turn.calls``, ``CheckRow``, ``AuditEntry``)."""
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir=/dev/null", "co_todo", "tests"],
        cwd=ROOT / "examples" / "co-todo",
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("taken", ["shell", "co-shell", "slack", "obsidian", "google"])
def test_names_of_bundled_plugins_are_refused(tmp_path: Path, taken: str) -> None:
    result = run_co("plugin", "new", taken, cwd=tmp_path)
    name = taken.removeprefix("co-")
    assert (result.returncode, result.stderr) == (
        1,
        f"co: error: plugin name {name!r} is taken: co-{name} is one of Co's bundled plugins "
        f"(pip install co-{name}); pick another (nothing was written)\n",
    )
    assert list(tmp_path.iterdir()) == []


def test_names_of_installed_plugins_are_refused(tmp_path: Path) -> None:
    from co_core.testing import install_fake_plugin

    site = install_fake_plugin(tmp_path / "site", "todo", "from co_core import hookimpl\n")
    work = tmp_path / "work"
    work.mkdir()
    result = run_co("plugin", "new", "todo", cwd=work, env={"PYTHONPATH": str(site)})
    assert result.returncode == 1
    assert result.stderr.startswith("co: error: plugin name 'todo' is taken: an installed plugin")
    assert "co-todo 1.0.0" in result.stderr and len(result.stderr.splitlines()) == 1
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("section", ["policy", "telemetry", "sessions", "mcp", "local"])
def test_names_of_cos_own_settings_sections_are_refused(tmp_path: Path, section: str) -> None:
    result = run_co("plugin", "new", section, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("co: error: bad plugin name") and "Co's own" in result.stderr


def test_plugin_guide_is_shipped_and_links_to_published_docs() -> None:
    shown = run_co("plugin", "guide")
    assert shown.returncode == 0, shown.stderr
    guide = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    assert shown.stdout.splitlines()[0] == guide.splitlines()[0]
    assert "<!-- snippet:" not in shown.stdout  # markers are for Co's tests, not readers
    assert "](policy.md" not in shown.stdout  # relative links point at the published docs
    assert "](https://github.com/co-cli/co/blob/main/docs/policy.md" in shown.stdout


def test_plugin_example_writes_co_todo_once(tmp_path: Path) -> None:
    made = run_co("plugin", "example", "--dir", str(tmp_path))
    assert made.returncode == 0, made.stderr
    written = sorted(
        p.relative_to(tmp_path / "co-todo").as_posix()
        for p in (tmp_path / "co-todo").rglob("*")
        if p.is_file()
    )
    tracked = run("git", "ls-files", "examples/co-todo", cwd=ROOT).stdout.split()
    assert written == sorted(name.removeprefix("examples/co-todo/") for name in tracked)
    again = run_co("plugin", "example", "--dir", str(tmp_path))
    assert again.returncode == 1
    assert again.stderr.strip().endswith(
        "already exists: pick another folder (nothing was written)"
    )
