"""Settings: precedence, clear errors, `co config`, and trusted project settings."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from co_core.testing import make_app, run_co


def show(**env: str) -> dict[str, dict]:
    result = run_co("config", "show", "--json", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_defaults_env_and_file_precedence(co_dirs: Path) -> None:
    assert show()["request_limit"] == {"value": 25, "source": "default"}
    assert show(CO_REQUEST_LIMIT="7")["request_limit"] == {
        "value": 7,
        "source": "env:CO_REQUEST_LIMIT",
    }
    (co_dirs / "settings.json").write_text(json.dumps({"request_limit": 9}))
    # The settings file wins over the environment (documented order: file, env, default).
    assert show(CO_REQUEST_LIMIT="7")["request_limit"] == {"value": 9, "source": "file"}


def test_plugin_section_env_names(co_dirs: Path) -> None:
    values = show(
        OBSIDIAN_VAULT_PATH="/notes", CO_SHELL_TIMEOUT="5", CO_DISABLED_PLUGINS="slack, google"
    )
    assert values["obsidian.vault_path"] == {"value": "/notes", "source": "env:OBSIDIAN_VAULT_PATH"}
    assert values["shell.timeout"]["value"] == 5.0
    assert values["disabled_plugins"]["value"] == ["slack", "google"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            '{"shell": {"timeout": "soon"}',
            "line 1 column 30: invalid JSON: Expecting ',' delimiter",
        ),
        ('{"shell": {"timeout": "soon"}}', "shell.timeout: Input should be a valid number"),
        (
            '{"shell": {"timout": 3}}',
            "shell.timout: unknown setting (a typo? `co config show` lists them)",
        ),
        (
            '{"request_limit": 0}',
            "request_limit: Input should be greater than or equal to 1 (got 0)",
        ),
        ('{"shell": 3}', "shell: must be an object of settings, not 3"),
        ("[1, 2]", "must hold a JSON object, not list"),
    ],
)
def test_bad_settings_file_gives_one_clear_line(co_dirs: Path, content: str, expected: str) -> None:
    settings_file = co_dirs / "settings.json"
    settings_file.write_text(content)
    result = run_co("config", "show")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"co: error: {settings_file}")
    assert expected in lines[0]


def test_bad_environment_variable_is_named(co_dirs: Path) -> None:
    result = run_co("config", "show", env={"CO_SHELL_PIDS": "lots"})
    assert result.returncode == 2
    assert result.stderr.startswith(
        "co: error: environment variable CO_SHELL_PIDS: shell.pids: Input should be"
    )


def test_config_set_get_unset_and_file_mode(co_dirs: Path) -> None:
    assert run_co("config", "set", "shell.timeout", "12").returncode == 0
    assert run_co("config", "set", "obsidian.vault_path", "2026").returncode == 0
    settings_file = co_dirs / "settings.json"
    assert stat.S_IMODE(settings_file.stat().st_mode) == 0o600
    assert json.loads(settings_file.read_text()) == {
        "obsidian": {"vault_path": "2026"},
        "shell": {"timeout": 12},
    }
    assert run_co("config", "get", "shell.timeout").stdout == "12.0\n"
    assert run_co("config", "unset", "shell.timeout").returncode == 0
    assert run_co("config", "get", "shell.timeout").stdout == "30.0\n"


def test_config_set_rejects_bad_values_and_unknown_keys(co_dirs: Path) -> None:
    bad = run_co("config", "set", "shell.timeout", "soon")
    assert bad.returncode == 2 and "shell.timeout: Input should be a valid number" in bad.stderr
    unknown = run_co("config", "set", "shell.timout", "3")
    assert unknown.returncode == 2
    assert "unknown setting 'shell.timout'" in unknown.stderr
    assert not (co_dirs / "settings.json").exists()  # nothing half-written


@pytest.mark.parametrize(
    "key, value, error",
    [
        ("request_limit", "-5", "request_limit: Input should be greater than or equal to 1"),
        ("shell.timeout", "-1.5", "shell.timeout: Input should be greater than 0"),
        ("retries", "-1", "retries: Input should be greater than or equal to 0"),
    ],
)
def test_config_set_takes_negative_numbers_as_values_and_validates_them(
    co_dirs: Path, key: str, value: str, error: str
) -> None:
    result = run_co("config", "set", key, value)
    assert result.returncode == 2
    assert "No such option" not in result.stderr
    assert f"{co_dirs / 'settings.json'}: {error} (got '{value}')" in result.stderr
    assert not (co_dirs / "settings.json").exists()


def test_config_set_stores_a_value_that_starts_with_a_dash(co_dirs: Path) -> None:
    assert run_co("config", "set", "obsidian.vault_path", "-notes").returncode == 0
    assert run_co("config", "get", "obsidian.vault_path").stdout == "-notes\n"


def test_config_show_prints_values_as_they_are(co_dirs: Path) -> None:
    """A value in brackets is no markup: `co config show` printed "reg/img" for
    "reg/img[v1]" (and `co status` `pip install "co-core"` for "co-core[local]")."""
    assert run_co("config", "set", "shell.image", "reg/img[v1]").returncode == 0
    shown = run_co("config", "show", env={"COLUMNS": "200"})
    assert "reg/img[v1]" in shown.stdout, shown.stdout


def test_config_path(co_dirs: Path) -> None:
    assert run_co("config", "path").stdout == f"{co_dirs / 'settings.json'}\n"


def test_untrusted_project_settings_are_ignored_with_notice(co_dirs: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".co").mkdir(parents=True)
    (project / ".co" / "settings.json").write_text(json.dumps({"shell": {"sandbox": "none"}}))
    (project / "src").mkdir()
    result = run_co("config", "get", "shell.sandbox", cwd=project / "src")
    assert result.stdout == "auto\n"
    assert f"ignoring {project / '.co' / 'settings.json'}: folder not trusted" in result.stderr
    assert run_co("trust", str(project)).returncode == 0
    trusted = run_co("config", "get", "shell.sandbox", cwd=project / "src")
    assert (trusted.stdout, trusted.stderr) == ("none\n", "")
    assert run_co("trust", "--list").stdout == f"{project}\n"
    assert run_co("trust", "--revoke", str(project)).returncode == 0
    assert run_co("config", "get", "shell.sandbox", cwd=project).stdout == "auto\n"


def test_project_settings_override_user_settings(co_dirs: Path, tmp_path: Path) -> None:
    (co_dirs / "settings.json").write_text(json.dumps({"shell": {"timeout": 5, "pids": 100}}))
    project = tmp_path / "p"
    (project / ".co").mkdir(parents=True)
    (project / ".co" / "settings.json").write_text(json.dumps({"shell": {"timeout": 9}}))
    run_co("trust", str(project))
    settings = make_app(cwd=project).settings
    assert (settings.get("shell.timeout"), settings.get("shell.pids")) == (9.0, 100)
    assert settings.sources["shell.timeout"] == "project"
    assert settings.project_file == project / ".co" / "settings.json"
