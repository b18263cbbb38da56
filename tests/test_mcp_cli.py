"""``co mcp add/list/remove`` and the ``co status`` line per server, run as a user would."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp_support import SERVER

from co_core.testing import run_co


def test_add_list_status_remove(co_dirs: Path, tmp_path: Path) -> None:
    added = run_co("mcp", "add", "notes", "--env", "NOTE_FILE=/tmp/x", "--", sys.executable, SERVER)
    assert added.returncode == 0, added.stderr
    assert "mcp:notes:*" in added.stdout
    dead = run_co("mcp", "add", "dead", "--", sys.executable, SERVER, "--exit-at-start")
    assert dead.returncode == 0, dead.stderr
    web = run_co(
        "mcp",
        "add",
        "web",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        "Authorization: Bearer s3cret",
    )
    assert web.returncode == 0, web.stderr
    assert "s3cret" not in web.stdout
    saved = json.loads((co_dirs / "settings.json").read_text())["mcp_servers"]
    assert saved["notes"] == {
        "command": sys.executable,
        "args": [SERVER],
        "env": {"NOTE_FILE": "/tmp/x"},
    }
    assert saved["dead"]["args"] == [SERVER, "--exit-at-start"]
    assert oct((co_dirs / "settings.json").stat().st_mode & 0o777) == "0o600"

    listed = run_co("mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["notes"]["status"] == "ok"
    assert sorted(rows["notes"]["tools"]) == ["add", "crash", "echo", "hang", "write_note"]
    assert "mcp:notes:write_note" in rows["notes"]["permission_keys"]
    assert rows["dead"]["status"] == "failed" and rows["dead"]["detail"]
    assert rows["web"]["status"] == "failed" and "s3cret" not in listed.stdout

    text = run_co("mcp", "list")
    assert "notes [user]" in text.stdout and "tools: echo, add (read-only hint)" in text.stdout
    assert "Traceback" not in text.stdout + text.stderr

    status = run_co("status", "--json")
    checks = {row["name"]: row for row in json.loads(status.stdout)}
    assert checks["mcp notes"]["state"] == "ok" and "5 tools" in checks["mcp notes"]["detail"]
    assert checks["mcp dead"]["state"] == "fail"

    removed = run_co("mcp", "remove", "dead")
    assert removed.returncode == 0 and "Removed" in removed.stdout
    assert "dead" not in json.loads((co_dirs / "settings.json").read_text())["mcp_servers"]


def test_bad_input_is_one_clear_line(co_dirs: Path) -> None:
    for args, expected in [
        (("mcp", "add", "a b", "--", "ls"), "server name 'a b'"),
        (("mcp", "add", "x"), "give either 'command'"),
        (("mcp", "add", "x", "--url", "ftp://h"), "must start with http"),
        (("mcp", "add", "x", "--url", "http://h", "--", "ls"), "not both"),
        (("mcp", "add", "x", "--url", "http://h", "--header", "nocolon"), "NAME:VALUE"),
        (("mcp", "remove", "nothing"), "no MCP server named 'nothing'"),
    ]:
        result = run_co(*args)
        assert result.returncode == 1, args
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], (args, result.stderr)
    assert run_co("mcp", "add", "x", "--", "ls").returncode == 0
    again = run_co("mcp", "add", "x", "--", "ls")
    assert again.returncode == 1 and "exists" in again.stderr


def test_a_broken_mcp_servers_entry_names_the_file_and_key(co_dirs: Path) -> None:
    (co_dirs / "settings.json").write_text(json.dumps({"mcp_servers": {"t": {"comand": "x"}}}))
    result = run_co("mcp", "list")
    assert result.returncode != 0
    assert "mcp_servers.t" in result.stderr and "comand" in result.stderr
    assert "Traceback" not in result.stderr
    (co_dirs / "settings.json").write_text(json.dumps({"mcp_servers": {"t u": {"command": "x"}}}))
    result = run_co("mcp", "list")
    assert result.returncode != 0 and "bad server name" in result.stderr


def test_list_shows_an_untrusted_projects_servers_as_off_without_starting_them(
    co_dirs: Path, tmp_path: Path
) -> None:
    project = tmp_path / "repo"
    (project / ".co").mkdir(parents=True)
    marker = project / "started"
    starter = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}
    (project / ".co" / "settings.json").write_text(json.dumps({"mcp_servers": {"evil": starter}}))
    listed = run_co("mcp", "list", "--json", cwd=project)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert (row["name"], row["source"], row["status"]) == ("evil", "project", "off")
    assert "untrusted" in row["detail"] and "co trust" in row["detail"]
    status = run_co("status", "--json", cwd=project)
    checks = {r["name"]: r for r in json.loads(status.stdout)}
    assert checks["mcp evil"]["state"] == "off"
    assert not marker.exists()
