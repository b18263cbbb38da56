"""Build the local test image for the Docker sandbox (no registry needed).

The root filesystem is assembled from the host: Debian's static busybox (its applets),
dash as ``/bin/sh`` and bash (as on Debian-based images such as ``python:3.12-slim``, so a
command meant for bash but run by ``sh`` behaves here as it would there), plus the host's
``/usr/bin/python3`` with its shared libraries and standard library, then ``docker
import``ed. Run ``python plugins/co_shell/tests/sandbox_image.py``
(CI) or let the test fixture build it on first use.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

TAG = "co-sandbox-test:4"
BUSYBOX = "/bin/busybox"
PYTHON = "/usr/bin/python3"
SHELLS = {"sh": "/usr/bin/dash", "bash": "/usr/bin/bash"}  # name in the image: host binary
# What Debian's busybox-static leaves out; strace traces what a command really runs (the
# differential tests).
TOOLS = {"nohup": "/usr/bin/nohup", "strace": "/usr/bin/strace"}
LOCALE = "/usr/lib/locale/C.utf8"  # LANG=C.UTF-8 in the sandbox: bash warns without it
SKIP = {"test", "__pycache__", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3"}


def _libs(binaries: list[str]) -> set[str]:
    found: set[str] = set()
    for binary in binaries:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            for part in parts:
                if part.startswith("/"):
                    found.add(part)
    return found


def _copy(src: str, root: Path) -> None:
    for path in {src, os.path.realpath(src)}:
        dest = root / path.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not dest.exists():
            shutil.copy2(os.path.realpath(src), dest)


def assemble(root: Path) -> None:
    needed = [BUSYBOX, PYTHON, *SHELLS.values(), *TOOLS.values(), LOCALE]
    if not all(os.path.exists(path) for path in needed):
        raise RuntimeError(
            f"building {TAG} needs {', '.join(needed)} "
            "(apt install busybox-static python3 dash bash coreutils locales strace)"
        )
    for folder in ("usr/bin", "usr/lib", "usr/lib64", "etc", "tmp", "workspace", "proc", "dev"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for link, target in (("bin", "usr/bin"), ("sbin", "usr/bin"), ("lib", "usr/lib")):
        (root / link).symlink_to(target)
    (root / "lib64").symlink_to("usr/lib64")
    shutil.copy2(BUSYBOX, root / "usr/bin/busybox")
    applets = subprocess.run([BUSYBOX, "--list"], capture_output=True, text=True).stdout.split()
    for applet in applets:
        link = root / "usr/bin" / applet
        if not link.exists() and applet != "busybox":
            link.symlink_to("busybox")
    for name, host_binary in {**SHELLS, **TOOLS}.items():
        link = root / "usr/bin" / name
        if link.exists() or link.is_symlink():
            link.unlink()  # busybox's applet
        shutil.copy2(os.path.realpath(host_binary), link)
        for lib in _libs([host_binary]):
            _copy(lib, root)
    shutil.copytree(LOCALE, root / LOCALE.lstrip("/"))
    if os.path.exists(PYTHON):
        real = os.path.realpath(PYTHON)
        shutil.copy2(real, root / "usr/bin" / os.path.basename(real))
        for name in ("python3", "python"):
            link = root / "usr/bin" / name
            if link.exists() or link.is_symlink():
                link.unlink()
            link.symlink_to(os.path.basename(real))
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        stdlib = Path("/usr/lib") / version
        shutil.copytree(
            stdlib,
            root / "usr/lib" / version,
            ignore=lambda d, names: SKIP & set(names),
            symlinks=True,
        )
        dynload = stdlib / "lib-dynload"
        extensions = [str(p) for p in dynload.glob("*.so")] if dynload.is_dir() else []
        for lib in _libs([real, *extensions]):
            _copy(lib, root)
    (root / "etc/passwd").write_text(
        "root:x:0:0:root:/root:/bin/sh\nco:x:1000:1000:co:/tmp:/bin/sh\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
    )
    (root / "etc/group").write_text("root:x:0:\nco:x:1000:\nnogroup:x:65534:\n")
    (root / "tmp").chmod(0o1777)


def image_exists(tag: str = TAG) -> bool:
    done = subprocess.run(["docker", "image", "inspect", tag], capture_output=True)
    return done.returncode == 0


def build(tag: str = TAG, force: bool = False) -> str:
    """Build (once) and return the image tag."""
    if not force and image_exists(tag):
        return tag
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "rootfs"
        root.mkdir()
        assemble(root)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.add(root, arcname=".")
        subprocess.run(
            ["docker", "import", "-", tag], input=buffer.getvalue(), check=True, capture_output=True
        )
    return tag


NO_BASH_TAG = "co-sandbox-nobash:1"


def build_without_bash(tag: str = NO_BASH_TAG) -> str:
    """A busybox-only image (``sh`` is busybox's ash, no bash): Co must refuse it clearly."""
    if image_exists(tag):
        return tag
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "rootfs"
        for folder in ("bin", "etc", "tmp", "workspace", "proc", "dev"):
            (root / folder).mkdir(parents=True)
        shutil.copy2(BUSYBOX, root / "bin/busybox")
        for applet in ("sh", "sleep", "echo", "ls", "cat"):
            (root / "bin" / applet).symlink_to("busybox")
        (root / "tmp").chmod(0o1777)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.add(root, arcname=".")
        subprocess.run(
            ["docker", "import", "-", tag], input=buffer.getvalue(), check=True, capture_output=True
        )
    return tag


if __name__ == "__main__":
    print(build(force="--force" in sys.argv))
