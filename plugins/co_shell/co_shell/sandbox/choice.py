"""Which backend ``shell.sandbox = auto`` runs commands in: the first that can run here.

1. Docker, when an engine answers and the image (``shell.image``) is already there: it
   starts at once and needs no network;
2. else bubblewrap, when it works here (installed, user namespaces allowed);
3. else Docker, when an engine answers: the image is pulled on first use (needs the
   network to reach its registry);
4. else none can run: the error says exactly what to install.

``none`` (no sandbox) is never chosen by ``auto``: running commands on the bare machine is
a choice the user makes by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from co_shell.sandbox.base import SandboxUnavailable
from co_shell.settings import ShellSettings

AUTO = "auto"
INSTALL = (
    "install bubblewrap (`sudo apt install bubblewrap`, `sudo dnf install bubblewrap`) "
    "or start Docker (https://docs.docker.com/engine/install/); or, to run commands "
    "unsandboxed on this machine, `co config set shell.sandbox none`"
)


@dataclass(frozen=True)
class Choice:
    """The backend to use and why not a better one (``co status`` shows both)."""

    backend: str
    note: str = ""


@dataclass(frozen=True)
class DockerState:
    """What the Docker engine says: reachable, and whether the image is there."""

    problem: str | None  # None: the engine answers
    image_present: bool = False
    where: str = ""


def docker_state(image: str, timeout: float = 3.0) -> DockerState:
    """Ask the engine (two small API requests; docker-py only for TLS/SSH engines)."""
    from co_shell import engine_probe
    from co_shell.sandbox.docker_sandbox import engine_address

    where = engine_address()
    try:
        version = engine_probe.get("/version", timeout=timeout)
    except OSError as exc:
        return DockerState(f"Docker is not running at {where} ({type(exc).__name__})")
    if version is None:
        return _docker_py_state(image, timeout)
    found = engine_probe.get(engine_probe.image_path(image), timeout=timeout)
    return DockerState(None, found is not None and found[0] == 200, where)


def _docker_py_state(image: str, timeout: float) -> DockerState:
    from co_shell.sandbox.docker_sandbox import connect, engine_address

    try:
        client = connect(timeout=timeout)
    except SandboxUnavailable as exc:
        return DockerState(str(exc))
    try:
        client.images.get(image)
        return DockerState(None, True, engine_address())
    except Exception:
        return DockerState(None, False, engine_address())
    finally:
        client.close()


def bubblewrap_problem() -> str | None:
    """None when bubblewrap runs here, else why not."""
    from co_shell.sandbox.base import sandbox_ids
    from co_shell.sandbox.bwrap_sandbox import probe

    return probe(*sandbox_ids())


def choose(settings: ShellSettings) -> Choice:
    """The backend ``auto`` picks now; SandboxUnavailable (saying what to install) if none."""
    docker = docker_state(settings.image)
    if docker.problem is None and docker.image_present:
        return Choice("docker")
    bwrap = bubblewrap_problem()
    if bwrap is None:
        return Choice("bubblewrap", docker.problem or f"Docker has no image {settings.image}")
    if docker.problem is None:
        return Choice("docker", f"bubblewrap cannot run: {bwrap}")
    raise SandboxUnavailable(
        f"no sandbox can run here: {docker.problem}, and bubblewrap cannot run ({bwrap}); "
        + INSTALL
    )
