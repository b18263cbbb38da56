"""The Docker backend: one hardened container per workspace, reused across commands.

The container's own process (``sleep`` under docker-init) runs as root with every
capability dropped; each command is a ``docker exec`` as an unprivileged uid (the host
user's, or 1000 when Co runs as root), with a minimal environment, in ``/workspace``.
The root filesystem is read-only (``/tmp`` is a private tmpfs), there is no network
unless allowed, and memory, CPU and process count are capped. A command that outlives
its timeout is killed together with everything it started (``kill -9 -1`` as its uid).
``DOCKER_HOST`` (and the other ``DOCKER_*`` variables) pick the engine, so the sandbox
can live on another machine; the workspace path must then exist there too.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from co_shell.sandbox.base import (
    WORKDIR,
    CommandResult,
    OutputCap,
    SandboxError,
    SandboxUnavailable,
    minimal_env,
    sandbox_ids,
)
from co_shell.settings import ShellSettings

KEEPALIVE = ["sleep", "2147483647"]
KILL_GRACE = 5.0  # seconds to wait for the stream to close after a kill


def engine_address() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def connect(timeout: float = 10) -> Any:
    """A docker-py client for the engine ``DOCKER_HOST`` names; SandboxUnavailable if none."""
    try:
        import docker
    except ImportError as exc:  # pragma: no cover - docker is a dependency of co-shell
        raise SandboxUnavailable(
            "the docker Python package is missing: pip install docker"
        ) from exc
    try:
        client = docker.from_env(timeout=int(timeout))
        client.ping()
        return client
    except Exception as exc:
        raise SandboxUnavailable(
            f"Docker engine not reachable at {engine_address()} ({_short(exc)}); start it "
            "(e.g. `sudo systemctl start docker`), point DOCKER_HOST at one, or set "
            "shell.sandbox to bubblewrap"
        ) from exc


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def container_name(workspace: Path) -> str:
    digest = hashlib.sha256(str(workspace).encode()).hexdigest()[:12]
    return f"co-sandbox-{digest}"


class DockerSandbox:
    name = "docker"
    workdir = WORKDIR

    def __init__(self, settings: ShellSettings, workspace: Path, client: Any = None) -> None:
        self.settings = settings
        self.workspace = Path(os.path.realpath(workspace))
        self.client = client or connect()
        self.uid, self.gid = sandbox_ids()
        self._container: Any = None
        self._lock = threading.Lock()

    # -- the container -------------------------------------------------------------------

    def _config(self) -> dict[str, Any]:
        s = self.settings
        return {
            "image": s.image,
            "workspace": str(self.workspace),
            "network": s.network,
            "memory": s.memory,
            "cpus": s.cpus,
            "pids": s.pids,
        }

    def _ensure_image(self) -> None:
        import docker.errors

        try:
            self.client.images.get(self.settings.image)
            return
        except docker.errors.ImageNotFound:
            pass
        try:
            self.client.images.pull(self.settings.image)
        except Exception as exc:
            raise SandboxUnavailable(
                f"Docker image {self.settings.image!r} is not on {engine_address()} and could "
                f"not be pulled ({_short(exc)}); pull or build it, or set shell.image"
            ) from exc

    def container(self) -> Any:
        """The workspace's container, created or restarted as needed."""
        import docker.errors

        if self._container is not None:
            return self._container
        name = container_name(self.workspace)
        config = json.dumps(self._config(), sort_keys=True)
        try:
            found = self.client.containers.get(name)
            if found.labels.get("co.config") != config:
                found.remove(force=True)  # settings changed: rebuild with the new limits
            else:
                if found.status != "running":
                    found.start()
                self._container = found
                return found
        except docker.errors.NotFound:
            pass
        self._ensure_image()
        s = self.settings
        try:
            self._container = self.client.containers.run(
                s.image,
                KEEPALIVE,
                name=name,
                detach=True,
                init=True,
                user="0:0",
                labels={
                    "co.sandbox": "1",
                    "co.workspace": str(self.workspace),
                    "co.config": config,
                },
                volumes={str(self.workspace): {"bind": WORKDIR, "mode": "rw"}},
                working_dir=WORKDIR,
                network_mode="bridge" if s.network else "none",
                mem_limit=s.memory,
                memswap_limit=s.memory,
                nano_cpus=int(s.cpus * 1e9),
                pids_limit=s.pids,
                read_only=True,
                tmpfs={"/tmp": "rw,nosuid,nodev,size=256m,mode=1777"},
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                environment=minimal_env(),
                entrypoint=[],
            )
        except docker.errors.APIError as exc:
            raise SandboxUnavailable(
                f"could not start the sandbox container: {_short(exc)}"
            ) from exc
        return self._container

    # -- commands ------------------------------------------------------------------------

    def run(self, argv: list[str], timeout: float | None = None) -> CommandResult:
        timeout = timeout or self.settings.timeout
        with self._lock:
            return self._run(argv, timeout)

    def _run(self, argv: list[str], timeout: float) -> CommandResult:
        api = self.client.api
        user = f"{self.uid}:{self.gid}"
        started = time.perf_counter()
        for attempt in (1, 2):
            container = self.container()
            try:
                exec_id = api.exec_create(
                    container.id, argv, user=user, workdir=WORKDIR, environment=minimal_env()
                )["Id"]
                stream = api.exec_start(exec_id, stream=True)
                break
            except Exception as exc:
                self._container = None  # removed or stopped behind our back: make it again
                if attempt == 2:
                    raise SandboxError(
                        f"the sandbox failed to start the command: {_short(exc)}"
                    ) from exc
        cap = OutputCap(self.settings.output_limit)

        def pump() -> None:
            try:
                for chunk in stream:
                    cap.feed(chunk)
            except Exception:
                pass

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        reader.join(timeout)
        timed_out = reader.is_alive()
        if timed_out:
            kill = api.exec_create(container.id, ["sh", "-c", "kill -9 -1"], user=user)["Id"]
            api.exec_start(kill)
            reader.join(KILL_GRACE)
        code = api.exec_inspect(exec_id).get("ExitCode")
        return CommandResult(
            exit_code=137 if code is None else int(code),
            output=cap.text(),
            cut=cap.cut,
            timed_out=timed_out,
            seconds=time.perf_counter() - started,
        )

    def close(self) -> None:
        """Remove the container unless the user wants it kept for reuse."""
        if self._container is not None and not self.settings.keep_container:
            try:
                self._container.remove(force=True)
            except Exception:
                pass
        self._container = None
        try:
            self.client.close()
        except Exception:
            pass
