"""Co installs the way users install it: wheels, a fresh venv, only the plugins chosen."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["co-core", "co-shell", "co-obsidian", "co-google", "co-slack"]

pytestmark = pytest.mark.slow


def run(*argv: str | Path, **kw) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=600, **kw
    )
    assert result.returncode == 0, f"{argv}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed (pip install uv)")
    out = tmp_path_factory.mktemp("wheels")
    for package in PACKAGES:
        run(uv, "build", "--wheel", "--package", package, "--out-dir", out, cwd=ROOT)
    found = {p.name.split("-")[0].replace("_", "-"): p for p in out.glob("*.whl")}
    assert set(found) == set(PACKAGES), found
    return found


def test_core_plus_google_lists_exactly_google(wheels: dict[str, Path], tmp_path: Path) -> None:
    uv = shutil.which("uv")
    venv = tmp_path / "venv"
    run(uv, "venv", "--quiet", venv)
    python = venv / "bin" / "python"
    run(uv, "pip", "install", "--quiet", "--python", python, wheels["co-core"], wheels["co-google"])
    env = {
        **os.environ,
        "CO_CONFIG_DIR": str(tmp_path / "cfg"),
        "CO_DATA_DIR": str(tmp_path / "data"),
    }
    env.pop("PYTHONPATH", None)
    env.pop("CO_LOAD_PLUGINS", None)
    listed = json.loads(run(venv / "bin" / "co", "plugins", "--json", env=env).stdout)
    assert [(p["name"], p["status"], p["distribution"]) for p in listed] == [
        ("google", "loaded", "co-google")
    ]
    assert run(venv / "bin" / "co", "--version", env=env).stdout.startswith("co ")
