"""Co installs the way users install it: wheels and sdists, a fresh venv, only the plugins chosen.

Every package is built as a user or PyPI would get it and checked for what a package page
and a careful user look at: the licence, project links, a long description written for a
package index, classifiers, and nothing stray inside.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
import zipfile
from email.message import Message
from email.parser import HeaderParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["co-core", "co-shell", "co-obsidian", "co-google", "co-slack"]
TOP = {"co-core": "co_core", **{p: p.replace("-", "_") for p in PACKAGES[1:]}}
MAX_CORE_PACKAGES = 60  # issue 31: co-core alone was 89

pytestmark = pytest.mark.slow


def run(*argv: str | Path, **kw) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=900, **kw
    )
    assert result.returncode == 0, f"{argv}:\n{result.stdout}\n{result.stderr}"
    return result


def uv() -> str:
    found = shutil.which("uv")
    if found is None:
        pytest.skip("uv is not installed (pip install uv)")
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each package's sdist, and its wheel built from that sdist (as ``uv build`` does)."""
    out = tmp_path_factory.mktemp("dist")
    for package in PACKAGES:
        run(uv(), "build", "--quiet", "--package", package, "--out-dir", out, cwd=ROOT)
    return out


def wheel(built: Path, package: str) -> Path:
    return next(built.glob(f"{TOP[package]}-*.whl"))


def sdist(built: Path, package: str) -> Path:
    return next(built.glob(f"{TOP[package]}-*.tar.gz"))


def metadata(built: Path, package: str) -> Message:
    with zipfile.ZipFile(wheel(built, package)) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return HeaderParser().parsestr(archive.read(name).decode())


@pytest.mark.parametrize("package", PACKAGES)
def test_licence_text_is_in_the_wheel_and_the_sdist(built: Path, package: str) -> None:
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.lstrip().startswith("Apache License") and "Version 2.0" in licence
    meta = metadata(built, package)
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    with zipfile.ZipFile(wheel(built, package)) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE"))
        assert archive.read(name).decode() == licence
    with tarfile.open(sdist(built, package)) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/LICENSE"))
        assert archive.extractfile(member).read().decode() == licence  # type: ignore[union-attr]


@pytest.mark.parametrize("package", PACKAGES)
def test_package_page_has_links_classifiers_and_a_readable_description(
    built: Path, package: str
) -> None:
    meta = metadata(built, package)
    urls = dict(entry.split(", ", 1) for entry in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls), urls
    assert all(url.startswith("https://") for url in urls.values())
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3" in classifiers
    assert "Environment :: Console" in classifiers
    if package != "co-core":
        assert "Environment :: Plugins" in classifiers
        assert "co-plugin" in meta["Keywords"].split(",")
    assert meta["Description-Content-Type"] == "text/markdown"
    description = meta.get_payload()
    assert len(description) > 500 and description.startswith("# ")
    links = re.findall(r"\]\(([^)\s]+)\)", description) + re.findall(r"<([^>\s]+)>", description)
    relative = [link for link in links if not re.match(r"(https?:|mailto:|#)", link)]
    assert relative == [], "relative links are dead on a package index"
    lowered = description.lower()
    for repo_only in ("clone", "uv run", "uv sync", "this repository"):
        assert repo_only not in lowered, f"{package}'s description says {repo_only!r}"
    assert "pip install" in description and package in description


def _tracked(folder: str) -> set[str]:
    """The files git knows under ``folder``, relative to it."""
    listed = run("git", "ls-files", folder, cwd=ROOT).stdout.split()
    return {name.removeprefix(f"{folder}/") for name in listed}


def _allowed_sdist(package: str, path: str) -> bool:
    """What an sdist holds: the package, its page, licence and build file (hatchling adds
    .gitignore); co-core also the plugin guide and its example, which its wheel ships."""
    name = path.split("/", 1)[1] if "/" in path else ""
    if name in ("PKG-INFO", "pyproject.toml", "LICENSE", ".gitignore"):
        return True
    if name == ("PYPI.md" if package == "co-core" else "README.md"):
        return True
    if package == "co-core" and name == "docs/plugins.md":
        return True
    if package == "co-core" and name.startswith("examples/co-todo/"):
        return name.removeprefix("examples/co-todo/") in _tracked("examples/co-todo")
    return name.startswith(f"{TOP[package]}/")


@pytest.mark.parametrize("package", PACKAGES)
def test_no_stray_files(built: Path, package: str) -> None:
    with tarfile.open(sdist(built, package)) as archive:
        names = [m.name for m in archive.getmembers() if m.isfile()]
    stray = [n for n in names if not _allowed_sdist(package, n)]
    assert stray == []
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not [n for n in names if "/tests/" in n and "/examples/co-todo/" not in n]
    with zipfile.ZipFile(wheel(built, package)) as archive:
        files = archive.namelist()
    outside = [n for n in files if not n.startswith((f"{TOP[package]}/", f"{TOP[package]}-"))]
    assert outside == []
    assert not [n for n in files if "__pycache__" in n or n.endswith(".pyc")]


def test_core_wheel_ships_the_plugin_guide_and_its_example(built: Path) -> None:
    with zipfile.ZipFile(wheel(built, "co-core")) as archive:
        files = set(archive.namelist())
        guide = archive.read("co_core/cli/guide/plugins.md").decode()
    assert guide == (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    expected = {f"co_core/cli/guide/co-todo/{name}" for name in _tracked("examples/co-todo")}
    shipped = {name for name in files if name.startswith("co_core/cli/guide/co-todo/")}
    assert shipped == expected  # the example as committed: no caches of whoever built it


# -- a fresh venv, as a user installs ----------------------------------------------------


def _figures() -> dict[str, tuple[int, float]]:
    """bench/README.md's "Install size" table: install -> (packages, MB), after the change."""
    text = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    section = text.split("## Install size", 1)[1].split("\n## ", 1)[0]
    figures = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`co-core"):
            figures[cells[0].strip("`")] = (int(cells[2]), float(cells[4].removesuffix(" MB")))
    return figures


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CO_", "VIRTUAL_ENV"))}
    env.pop("PYTHONPATH", None)
    env.update(
        CO_CONFIG_DIR=str(tmp_path / "cfg"),
        CO_DATA_DIR=str(tmp_path / "data"),
        CO_CACHE_DIR=str(tmp_path / "cache"),
        OLLAMA_HOST="http://127.0.0.1:9",  # nothing answers: no model is picked by itself
    )
    env.pop("GEMINI_API_KEY", None)
    return env


@pytest.fixture(scope="module")
def core_and_google(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip install co-core co-google`` from the wheels into a fresh venv (no pip in it)."""
    venv = tmp_path_factory.mktemp("user") / "venv"
    run(uv(), "venv", "--quiet", venv)
    python = venv / "bin" / "python"
    run(uv(), "pip", "install", "--quiet", "--python", python, "--find-links", built,
        wheel(built, "co-core"), wheel(built, "co-google"), cwd=venv.parent)  # fmt: skip
    return venv


def _count_and_size(venv: Path) -> tuple[int, float]:
    site = next((venv / "lib").glob("python3*/site-packages"))
    size = sum(f.stat().st_size for f in site.rglob("*") if f.is_file() and not f.is_symlink())
    return len(list(site.glob("*.dist-info"))), size / 1e6


def test_core_plus_google_lists_exactly_google(core_and_google: Path, tmp_path: Path) -> None:
    co = core_and_google / "bin" / "co"
    listed = json.loads(run(co, "plugins", "--json", env=_env(tmp_path)).stdout)
    assert [(p["name"], p["status"], p["distribution"]) for p in listed] == [
        ("google", "loaded", "co-google")
    ]
    assert run(co, "--version", env=_env(tmp_path)).stdout.startswith("co ")


def test_install_size_matches_the_benchmark_figures(core_and_google: Path) -> None:
    figures = _figures()
    count, mb = _count_and_size(core_and_google)
    documented_count, documented_mb = figures["co-core co-google"]
    # dependencies move on between releases: a few packages or a fifth of the size is drift,
    # more means bench/README.md ("Install size") needs `uv run python bench/install_size.py`
    assert abs(count - documented_count) <= 3, (count, documented_count)
    assert abs(mb - documented_mb) <= documented_mb * 0.2, (mb, documented_mb)
    assert figures["co-core"][0] <= MAX_CORE_PACKAGES


def test_core_alone_stays_small(built: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    run(uv(), "venv", "--quiet", venv)
    run(uv(), "pip", "install", "--quiet", "--python", venv / "bin" / "python",
        wheel(built, "co-core"), cwd=tmp_path)  # fmt: skip
    count, mb = _count_and_size(venv)
    documented_count, documented_mb = _figures()["co-core"]
    assert count <= MAX_CORE_PACKAGES, f"co-core alone pulls {count} packages"
    assert abs(count - documented_count) <= 3 and abs(mb - documented_mb) <= documented_mb * 0.2
    site = next((venv / "lib").glob("python3*/site-packages"))
    for extra_only in ("anthropic", "google/genai", "mcp", "fastmcp", "uvicorn"):
        assert not (site / extra_only).exists(), f"{extra_only} is installed without its extra"


@pytest.mark.parametrize(
    "argv, line",
    [
        (
            ["ask", "--model", "gemini:gemini-2.5-flash", "hi"],
            "co: error: Gemini models need co-core's 'gemini' extra, which is not installed: "
            'pip install "co-core[gemini]"',
        ),
        (
            ["ask", "--model", "anthropic:claude-sonnet-4-5", "hi"],
            "co: error: Anthropic models need co-core's 'anthropic' extra, which is not "
            'installed: pip install "co-core[anthropic]"',
        ),
        (
            ["mcp", "serve"],
            "co: error: MCP servers need co-core's 'mcp' extra, which is not installed: "
            'pip install "co-core[mcp]"',
        ),
    ],
    ids=["gemini", "anthropic", "mcp-serve"],
)
def test_a_missing_extra_is_one_line_naming_the_pip_command(
    core_and_google: Path, tmp_path: Path, argv: list[str], line: str
) -> None:
    done = subprocess.run(
        [core_and_google / "bin" / "co", *argv],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert done.stderr.strip() == line


def test_a_configured_mcp_server_and_collector_say_what_is_missing(
    core_and_google: Path, tmp_path: Path
) -> None:
    env = {**_env(tmp_path), "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
    co = core_and_google / "bin" / "co"
    run(co, "mcp", "add", "time", "--", "python", "-m", "mcp_server_time", env=env)
    rows = {r["name"]: r for r in json.loads(
        subprocess.run([co, "status", "--json"], env=env, capture_output=True, text=True,
                       timeout=120).stdout)}  # fmt: skip
    assert rows["traces"]["state"] == "warn"
    assert rows["traces"]["detail"].endswith(
        "needs co-core's 'otlp' extra, which is not installed: pip install \"co-core[otlp]\""
    )
    assert "co-core's 'mcp' extra" in rows["mcp time"]["detail"]


def test_plugins_install_puts_the_guides_example_where_co_runs(
    core_and_google: Path, tmp_path: Path
) -> None:
    """``co plugins install`` into a venv without pip (as uv tool makes them): uv does it.
    Then the shipped example's own tests pass against the installed co-core."""
    co = core_and_google / "bin" / "co"
    env = _env(tmp_path)
    assert not (core_and_google / "bin" / "pip").exists()
    run(co, "plugin", "example", "--dir", tmp_path, env=env)
    example = tmp_path / "co-todo"
    installed = run(co, "plugins", "install", "-e", f"{example}[test]", env=env)
    assert "uv pip install --python" in installed.stdout
    listed = json.loads(run(co, "plugins", "--json", env=env).stdout)
    assert {p["name"]: p["tools"] for p in listed}["todo"] == ["list_todos", "add_todo"]
    run(core_and_google / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
        cwd=example, env=env)  # fmt: skip
    run(co, "plugins", "uninstall", "co-todo", env=env)
    listed = json.loads(run(co, "plugins", "--json", env=env).stdout)
    assert [p["name"] for p in listed] == ["google"]


def test_lowest_supported_pydantic_ai_runs_a_turn(built: Path, tmp_path: Path) -> None:
    """The floor of co-core's pydantic-ai range: the example's tests (real turns through
    Co's agent and policy) pass on it, with pip doing the installing this time."""
    floor = re.search(
        r'"pydantic-ai-slim\[openai\]>=([\d.]+),<(\d+)"',
        (ROOT / "pyproject.toml").read_text(encoding="utf-8"),
    )
    assert floor is not None, "pyproject.toml gives pydantic-ai-slim a range"
    venv = tmp_path / "venv"
    run(uv(), "venv", "--quiet", "--seed", venv)
    python = venv / "bin" / "python"
    run(uv(), "pip", "install", "--quiet", "--python", python, wheel(built, "co-core"),
        f"pydantic-ai-slim[openai]=={floor.group(1)}.*", "pytest", cwd=tmp_path)  # fmt: skip
    env = _env(tmp_path)
    run(venv / "bin" / "co", "plugin", "example", "--dir", tmp_path, env=env)
    example = tmp_path / "co-todo"
    installed = run(venv / "bin" / "co", "plugins", "install", "-e", example, env=env)
    assert f"{python} -m pip install" in installed.stdout
    run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=example, env=env)
    version = run(
        python, "-c", "import importlib.metadata as m; print(m.version('pydantic-ai-slim'))"
    )
    assert version.stdout.startswith(floor.group(1))


def test_under_uv_tool_the_line_names_co_plugins_install(
    core_and_google: Path, tmp_path: Path
) -> None:
    """A uv tool (or pipx) environment is not where a plain `pip` installs: Co says the
    command that reaches its own environment."""
    receipt = core_and_google / "uv-receipt.toml"  # what `uv tool install` leaves
    receipt.write_text('[tool]\nrequirements = [{ name = "co-core" }]\n')
    try:
        done = subprocess.run(
            [core_and_google / "bin" / "co", "ask", "--model", "gemini:gemini-2.5-flash", "hi"],
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        receipt.unlink()
    assert done.stderr.strip().endswith(': co plugins install "co-core[gemini]"')


# What the plugins' floors must give, checked on the floor itself and on the release below
# it (which must fail the same check, or the floor is not what makes it hold):
# google-auth-oauthlib 1.3.0 is the first whose ``from_client_config`` (under Co's
# ``from_client_secrets_file``) keeps PKCE on (#356; 1.2.0-1.2.4 turn it off);
# slack-sdk 3.37 is the first whose ``chat_postMessage`` takes ``markdown_text`` (older ones
# warn on every post that the text is missing).
FLOOR_CHECK = r"""
import json, sys, warnings
from pathlib import Path
from co_google.auth import SCOPES, CONSOLE_REDIRECT
from google_auth_oauthlib.flow import InstalledAppFlow
secrets = Path(sys.argv[1])
secrets.write_text(json.dumps({"installed": {
    "client_id": "cid.apps.googleusercontent.com", "client_secret": "s",
    "auth_uri": "https://accounts.google.com/o/oauth2/auth",
    "token_uri": "https://oauth2.googleapis.com/token",
    "redirect_uris": ["http://localhost"]}}))
flow = InstalledAppFlow.from_client_secrets_file(str(secrets), SCOPES)
flow.redirect_uri = CONSOLE_REDIRECT
url, _state = flow.authorization_url(access_type="offline", prompt="consent")
assert "code_challenge_method=S256" in url and flow.code_verifier, "PKCE is off"
from slack_sdk import WebClient
client = WebClient(token="xoxb-1", base_url="http://127.0.0.1:9/", timeout=1)
with warnings.catch_warnings():
    warnings.simplefilter("error")
    try:
        client.chat_postMessage(channel="C1", markdown_text="**hi**")
    except UserWarning as exc:
        raise AssertionError(f"markdown_text is not known: {exc}") from None
    except Exception:
        pass  # nothing listens on port 9: only the warning matters
print("floors hold")
"""
BELOW_FLOOR = {"google-auth-oauthlib": "1.2.4", "slack-sdk": "3.36.0"}


def _floor(pyproject: Path, name: str) -> str:
    found = re.search(rf'"{name}>=([\d.]+)"', pyproject.read_text(encoding="utf-8"))
    assert found is not None, f"{pyproject} gives {name} a floor"
    return found.group(1)


@pytest.mark.parametrize("at", ["floor", "below"])
def test_the_plugins_floors_keep_pkce_and_markdown_text(
    built: Path, tmp_path: Path, at: str
) -> None:
    floors = {
        "google-auth-oauthlib": _floor(ROOT / "plugins/co_google/pyproject.toml",
                                       "google-auth-oauthlib"),
        "slack-sdk": _floor(ROOT / "plugins/co_slack/pyproject.toml", "slack-sdk"),
    }  # fmt: skip
    versions = floors if at == "floor" else BELOW_FLOOR
    venv = tmp_path / "venv"
    run(uv(), "venv", "--quiet", venv)
    python = venv / "bin" / "python"
    wheels = [wheel(built, p) for p in ("co-core", "co-google", "co-slack")]
    pins = [f"{name}=={version}" for name, version in versions.items()]
    # The wheels' own floors would refuse a version below them: install those apart.
    run(uv(), "pip", "install", "--quiet", "--python", python, *wheels,
        *(pins if at == "floor" else []), cwd=tmp_path)  # fmt: skip
    if at == "below":
        run(uv(), "pip", "install", "--quiet", "--python", python, "--no-deps", *pins,
            cwd=tmp_path)  # fmt: skip
    done = subprocess.run(
        [python, "-c", FLOOR_CHECK, tmp_path / "client.json"],
        capture_output=True, text=True, timeout=300, env=_env(tmp_path),
    )  # fmt: skip
    installed = run(python, "-c", "import importlib.metadata as m; "
                    "print(m.version('google-auth-oauthlib'), m.version('slack-sdk'))")  # fmt: skip
    from packaging.version import Version

    assert [Version(v) for v in installed.stdout.split()] == [Version(v) for v in versions.values()]
    if at == "floor":
        assert done.returncode == 0 and "floors hold" in done.stdout, done.stderr
    else:
        assert done.returncode != 0
        assert "PKCE is off" in done.stderr or "markdown_text is not known" in done.stderr
