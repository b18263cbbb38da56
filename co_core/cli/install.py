"""``co plugins install`` / ``uninstall``: packages into the environment Co runs from.

Co finds plugins through the entry points of its own Python, so a plugin must land in
``sys.executable``'s environment, wherever that is: a venv, pipx's (which has pip) or
``uv tool``'s (which has none: uv installs there with ``--python``). This is what
``llm install`` does for llm.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

from co_core.kernel.errors import CoError


def installer() -> list[str]:
    """The command that installs into Co's environment: its pip, else uv aimed at it."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    uv = shutil.which("uv")
    if uv is not None:
        return [uv, "pip"]
    raise CoError(
        f"Co's Python ({sys.executable}) has no pip and uv is not on PATH: "
        f"install pip there ({sys.executable} -m ensurepip) or install uv"
    )


def command(action: str, args: list[str]) -> list[str]:
    """``pip install ARGS`` (or ``uninstall -y``) for Co's environment."""
    base = installer()
    uses_uv = base[-1] == "pip" and base[0] != sys.executable
    argv = [*base, action]
    if uses_uv:
        argv += ["--python", sys.executable]
    elif action == "uninstall":
        argv.append("-y")  # pip asks; uv does not
    return argv + args


def run(action: str, args: list[str]) -> None:
    """Run the installer with its output shown; one error line if it fails."""
    argv = command(action, args)
    print(f"Running: {' '.join(argv)}", flush=True)
    try:
        code = subprocess.call(argv)
    except OSError as exc:
        raise CoError(f"cannot run {argv[0]}: {exc}") from None
    if code != 0:
        raise CoError(f"{action} failed (exit code {code}; the installer's output is above)")
