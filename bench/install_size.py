"""How much ``pip install co-core`` brings: packages and megabytes, from freshly built wheels.

    uv run python bench/install_size.py            # co-core, co-core co-google, co-core[all]

Builds the five wheels, installs each combination into a fresh venv (uv, no bytecode
compiled) and counts the distributions and the size of site-packages. bench/README.md
("Install size") has the figures; tests/test_wheels.py checks a fresh install against them.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["co-core", "co-shell", "co-obsidian", "co-google", "co-slack"]


def build(out: Path) -> dict[str, Path]:
    for package in PACKAGES:
        subprocess.run(
            ["uv", "build", "--quiet", "--wheel", "--package", package, "--out-dir", str(out)],
            cwd=ROOT,
            check=True,
        )
    return {p.name.split("-")[0].replace("_", "-"): p for p in out.glob("*.whl")}


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def measure(venv: Path, requirements: list[str], *, find_links: Path) -> tuple[int, float]:
    """Install ``requirements`` into a new venv; (distributions, MB of site-packages)."""
    subprocess.run(["uv", "venv", "--quiet", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        ["uv", "pip", "install", "--quiet", "--python", str(python), "--find-links",
         str(find_links), *requirements],
        check=True,
        cwd=venv,  # outside the project: its compile-bytecode setting does not apply
    )  # fmt: skip
    site = site_packages(venv)
    count = len(list(site.glob("*.dist-info")))
    size = sum(f.stat().st_size for f in site.rglob("*") if f.is_file() and not f.is_symlink())
    return count, size / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    if shutil.which("uv") is None:
        sys.exit("uv is not installed (pip install uv)")
    with tempfile.TemporaryDirectory(prefix="co-size-") as tmp:
        wheels = build(Path(tmp) / "wheels")
        core = str(wheels["co-core"])
        for label, requirements in [
            ("co-core", [core]),
            ("co-core co-google", [core, str(wheels["co-google"])]),
            ("co-core[all]", [f"co-core[all] @ {Path(core).as_uri()}"]),
        ]:
            count, mb = measure(Path(tmp) / label.replace(" ", "_"), requirements,
                                find_links=Path(tmp) / "wheels")  # fmt: skip
            print(f"| `{label}` | {count} | {mb:.0f} MB |")


if __name__ == "__main__":
    main()
