"""set_file_value: one setting of a config file changed, the rest byte for byte.

Checked by difference: each config is read by its format's real parser (configparser,
tomllib, PyYAML, json) before and after, and exactly one value differs.
"""

from __future__ import annotations

import configparser
import json
import random
import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from co_shell import file_tools
from co_shell.config_values import NotSet, set_value
from pydantic_ai import ModelRetry
from shell_testlib import make_workspace

from co_core.testing import make_app, make_deps

INI = "; the server\n[server]\nhost = 127.0.0.1\nport = 41234 ; main port\n\n[db]\nport=5432\nname = shop\n"
TOML = 'title = "Demo"\n\n[server]\nport = 41234  # main\nhost = "0.0.0.0"\n\n[owner]\nname = \'Tom\'\n'
YAML = 'server:\n  port: 41234\n  host: 0.0.0.0\nretries: 3 # how often\nname: "shop"\n'
JSON = '{\n  "port": 41234,\n  "name": "shop",\n  "debug": false\n}\n'
ENV = '# secrets stay\nexport API_URL="http://x#y" # the api\nMAX_CONNECTIONS=10\n'


def _ini(text: str) -> dict[str, dict[str, str]]:
    parser = configparser.ConfigParser(inline_comment_prefixes=(";",))
    parser.read_string(text)
    return {s: dict(parser[s]) for s in parser.sections()}


@pytest.mark.parametrize(
    ("text", "key", "value", "parse", "where", "expected"),
    [
        (INI, "server.port", "8088", _ini, ("server", "port"), "8088"),
        (INI, "db.port", "6543", _ini, ("db", "port"), "6543"),
        (INI, "name", "store", _ini, ("db", "name"), "store"),
        (TOML, "server.port", "8088", tomllib.loads, ("server", "port"), 8088),
        (TOML, "title", "New title", tomllib.loads, ("title",), "New title"),
        (TOML, "owner.name", "Ann O'Neil", tomllib.loads, ("owner", "name"), "Ann O'Neil"),
        (YAML, "port", "8088", yaml.safe_load, ("server", "port"), 8088),
        (YAML, "Retries", "5", yaml.safe_load, ("retries",), 5),
        (YAML, "name", 'the "best" shop', yaml.safe_load, ("name",), 'the "best" shop'),
        (JSON, "port", "8088", json.loads, ("port",), 8088),
        (JSON, "name", 'a "quoted" name', json.loads, ("name",), 'a "quoted" name'),
        (JSON, "debug", "true", json.loads, ("debug",), True),
    ],
)
def test_one_value_changes_and_nothing_else(
    text: str, key: str, value: str, parse: Any, where: tuple[str, ...], expected: Any
) -> None:
    before, after = parse(text), parse(set_value(text, key, value).text)
    node = after
    for part in where[:-1]:
        node = node[part]
    assert node[where[-1]] == expected
    node[where[-1]] = _get(before, where)
    assert after == before  # everything else as it was


def _get(data: Any, where: tuple[str, ...]) -> Any:
    for part in where:
        data = data[part]
    return data


def test_comments_spacing_and_line_ends_stay() -> None:
    done = set_value(INI.replace("\n", "\r\n"), "server.port", "8088")
    assert done.text == INI.replace("port = 41234 ; main", "port = 8088 ; main").replace(
        "\n", "\r\n"
    )
    assert (done.line, done.before, done.after) == (
        4,
        "port = 41234 ; main port",
        "port = 8088 ; main port",
    )
    env = set_value(ENV, "api url", "https://api.example.org/v2")
    assert env.text == ENV.replace('"http://x#y"', '"https://api.example.org/v2"')
    assert set_value(ENV, "max-connections", "20").text.endswith("MAX_CONNECTIONS=20\n")


@pytest.mark.parametrize(
    ("text", "key", "why"),
    [
        (INI, "port", "'port' is set in 2 places (line 4 in [server], line 7 in [db]); name one"),
        (INI, "timeout", "no line sets 'timeout'"),
        (INI, "cache.port", "no line sets 'cache.port'"),
        (JSON, "port\nname", "no line sets"),
    ],
)
def test_a_setting_that_is_not_there_once_is_refused_with_the_places(
    text: str, key: str, why: str
) -> None:
    with pytest.raises(
        NotSet,
        match=why.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(").replace(")", r"\)"),
    ):
        set_value(text, key, "1")


@pytest.mark.parametrize(
    ("text", "parse", "where"),
    [(TOML, tomllib.loads, ("server", "port")), (JSON, json.loads, ("port",))],
)
def test_text_where_a_number_was_is_quoted_in_typed_files(
    text: str, parse: Any, where: tuple[str, ...]
) -> None:
    assert _get(parse(set_value(text, where[-1], "auto", typed=True).text), where) == "auto"
    assert _get(parse(set_value(text, where[-1], "8088", typed=True).text), where) == 8088


def test_a_value_of_several_lines_is_refused() -> None:
    with pytest.raises(NotSet, match="one line"):
        set_value(INI, "name", "a\n[evil]\nport = 1")


def test_generated_ini_files_change_only_the_key_asked() -> None:
    """300 generated INI files: random keys, spacing, comments and values; configparser
    sees exactly one value change."""
    rng = random.Random(7)
    for _ in range(300):
        keys = rng.sample(["port", "host", "user", "timeout", "level", "path", "mode"], 4)
        lines = ["[main]"]
        for k in keys:
            sep = rng.choice(["=", " = ", ": ", " :"])
            comment = rng.choice(["", " ; note", " # x"])
            lines.append(f"{k}{sep}{rng.choice(['1', 'abc', 'a b', '/x/y'])}{comment}")
        text = "\n".join(lines) + "\n"
        key, value = rng.choice(keys), rng.choice(["8088", "new value", "x=y"])
        parser = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
        parser.read_string(text)
        before = dict(parser["main"])
        parser = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
        parser.read_string(set_value(text, key, value).text)
        after = dict(parser["main"])
        assert after[key] == value, text
        assert {k: v for k, v in after.items() if k != key} == {
            k: v for k, v in before.items() if k != key
        }


# -- the tool, on real files, with /undo ---------------------------------------------------


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = make_workspace()
    (folder / "config.ini").write_text(INI)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def deps(co_dirs: Path, workspace: Path) -> Iterator[Any]:
    deps = make_deps({}, workspace=workspace)
    yield deps
    deps.close()


def test_the_tool_changes_the_file_says_the_line_and_undo_puts_it_back(
    deps: Any, workspace: Path
) -> None:
    deps.changes.next_turn()
    said = file_tools.set_file_value(
        SimpleNamespace(deps=deps), "config.ini", "server.port", "8088"
    )
    assert (
        said
        == "set server.port in config.ini, line 4: port = 41234 ; main port -> port = 8088 ; main port"
    )
    assert "port = 8088 ; main port" in (workspace / "config.ini").read_text()
    assert "Undid turn" in deps.changes.undo().text()
    assert (workspace / "config.ini").read_text() == INI


def test_the_tool_says_what_to_do_when_the_setting_is_not_there(deps: Any, workspace: Path) -> None:
    with pytest.raises(ModelRetry, match="config.ini: 'port' is set in 2 places"):
        file_tools.set_file_value(SimpleNamespace(deps=deps), "config.ini", "port", "1")
    with pytest.raises(ModelRetry, match="no file 'missing.ini'"):
        file_tools.set_file_value(SimpleNamespace(deps=deps), "missing.ini", "port", "1")
    assert (workspace / "config.ini").read_text() == INI


# -- YAML read by two real parsers: one value, whatever the value holds ----------------------

YAML_DOC = (
    "name: shop\nport: 41234\ndebug: false\nmode: 'fast'\nlabel: \"x\"\n"
    "server:\n  host: example.org # where\n  region: eu-west-1\n"
)
# text that YAML reads as more than one value, another type, or a line break
YAML_PIECES = [
    "a", "Z", "7", "0", "-", ".", "_", "/", ":", ": ", " #", "#", "'", '"', "\\", "[", "]",
    "{", "}", ",", "&x", "*x", "!!python/object", "|", ">", "%", "@", "`", "?", "~", "yes",
    "No", "on", "OFF", "null", "true", "010", "1e3", "0x1F", "1_000", "12:30", ".inf",
    "2001-12-14", " ", "\t", "é", "日本", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\r",
    "\n", "\x1c", "\u202e", "\u200b", "\ufeff", "\x1b",
]  # fmt: skip


def _ruamel(text: str) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=True).load(text)


def _leaf(data: Any, key: str) -> Any:
    return data["server"][key] if key in ("host", "region") else data[key]


def test_generated_yaml_values_are_read_as_one_value_by_pyyaml_and_ruamel() -> None:
    """3000 generated values over a YAML file: Co writes each so that PyYAML and
    ruamel.yaml both read exactly that one value changed (the text itself, or the number
    or boolean a bare value is), or it refuses the value; nothing else changes."""
    rng = random.Random(2028)
    before = yaml.safe_load(YAML_DOC)
    assert _ruamel(YAML_DOC) == before
    written = refused = 0
    for _ in range(3000):
        value = "".join(rng.choice(YAML_PIECES) for _ in range(rng.randint(1, 4)))
        key = rng.choice(["name", "port", "debug", "mode", "label", "host", "region"])
        try:
            text = set_value(YAML_DOC, key, value, yaml=True).text
        except NotSet:
            refused += 1
            assert len(value.splitlines()) > 1 or any(
                ord(c) < 32 and c != "\t" or c in "\x7f\x85\u2028\u2029\u202e\u200b\ufeff"
                for c in value
            ), repr(value)
            continue
        written += 1
        for parse in (yaml.safe_load, _ruamel):
            after = parse(text)
            got = _leaf(after, key)
            assert got == value or (not isinstance(got, str) and str(got).lower() == value.lower()
                                    or isinstance(got, (int, float)) and float(value) == got), (
                parse, value, got, text)  # fmt: skip
            assert isinstance(got, str) or key in ("port", "debug") or value == str(got)
            if key in ("host", "region"):
                after["server"][key] = before["server"][key]
            else:
                after[key] = before[key]
            assert after == before, (value, text)
    assert written > 1000 and refused > 100


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\r\n"])
def test_a_line_separator_of_any_kind_is_refused(separator: str) -> None:
    """PyYAML reads U+2028, U+2029 and U+0085 as line breaks: the value would add a key."""
    with pytest.raises(NotSet, match="one line"):
        set_value(YAML_DOC, "name", f"x{separator}admin: true", yaml=True)
    with pytest.raises(NotSet, match="one line"):
        set_value(INI, "name", f"x{separator}[evil]", yaml=False)


def test_characters_a_reader_cannot_see_are_refused() -> None:
    for odd in ("\u202e", "\u200b", "\x1b", "\x00"):
        with pytest.raises(NotSet, match="cannot see"):
            set_value(YAML_DOC, "name", f"a{odd}b", yaml=True)


# -- a file the rules keep from being read ---------------------------------------------------

SECRET = "tok_9f8e7d6c5b4a39281706f5e4"


@pytest.fixture
def guarded(co_dirs: Path, workspace: Path) -> Iterator[Any]:
    """``secrets/`` may be written but not read; ``link.env`` is a symlink into it."""
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / ".env").write_text(f"API_TOKEN={SECRET} # was {SECRET[:8]}\nX=1\n")
    (workspace / "link.env").symlink_to("secrets/.env")
    rules = [
        {"match": "fs:read:secrets/**", "effect": "deny"},
        {"match": "fs:write:secrets/**", "effect": "allow"},
    ]
    app = make_app({"policy": {"rules": rules}, "shell": {"sandbox": "none"}}, cwd=workspace)
    deps = app.make_deps()
    deps.changes.next_turn()
    yield deps
    deps.close()


@pytest.mark.parametrize("path", ["secrets/.env", "link.env", "./secrets/../link.env"])
def test_a_file_kept_from_reading_shows_no_value_of_its_own(
    guarded: Any, workspace: Path, path: str
) -> None:
    said = file_tools.set_file_value(SimpleNamespace(deps=guarded), path, "API_TOKEN", "x")
    assert said == "set API_TOKEN in secrets/.env, line 1: now x (its old value is not shown)"
    assert SECRET[:8] not in said
    assert (workspace / "secrets" / ".env").read_text().startswith("API_TOKEN=x # was")


def test_edit_file_cannot_probe_a_file_kept_from_reading(guarded: Any, workspace: Path) -> None:
    for search in (f"API_TOKEN={SECRET}", "API_TOKEN=zzz"):
        with pytest.raises(ModelRetry, match="keep 'secrets/.env' from being read") as refused:
            file_tools.edit_file(SimpleNamespace(deps=guarded), "link.env", search, "API_TOKEN=x")
        assert SECRET not in str(refused.value)
    assert SECRET in (workspace / "secrets" / ".env").read_text()  # nothing changed


def test_through_the_agent_no_store_and_no_prompt_holds_the_old_value(
    co_dirs: Path, workspace: Path
) -> None:
    """The whole way: the approval prompt shows the key and the new value, the model gets
    the line without the old value, and no file Co writes holds it."""
    from co_core.testing import Approvals, run_turn, script_calls

    (workspace / "secrets").mkdir()
    (workspace / "secrets" / ".env").write_text(f"API_TOKEN={SECRET}\n")
    (workspace / "link.env").symlink_to("secrets/.env")
    rules = [{"match": "fs:read:secrets/**", "effect": "deny"}]
    app = make_app({"policy": {"rules": rules}, "shell": {"sandbox": "none"}}, cwd=workspace)
    desk = Approvals(True)
    script = script_calls(
        ("set_file_value", {"path": "link.env", "key": "API_TOKEN", "value": "x"})
    )
    turn = run_turn(app, "rotate the token", script, approvals=desk)
    assert [c["status"] for c in turn.calls] == ["ok"]
    assert (
        turn.output == "set API_TOKEN in secrets/.env, line 1: now x (its old value is not shown)"
    )
    asked = desk.asked[0]  # what the approval prompt shows: the arguments and the key
    assert dict(asked.args) == {"path": "secrets/.env", "key": "API_TOKEN", "value": "x"}
    assert asked.permission_key == "fs:write:secrets/.env"
    for path in (co_dirs.parent / "co-data").rglob("*"):
        # the change record keeps the file as it was, so /undo can put it back
        if path.is_file() and not path.name.startswith("changes.sqlite3"):
            assert SECRET.encode() not in path.read_bytes(), path
