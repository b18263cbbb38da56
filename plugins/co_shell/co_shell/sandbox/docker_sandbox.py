"""The Docker backend: one hardened container per workspace, reused across commands.

The container's own process (``sleep`` under docker-init) runs as root with every
capability dropped; each command is one ``docker exec`` as an unprivileged uid (the host
user's, or 1000 when Co runs as root), with a minimal environment, in ``/workspace``,
behind a bash prelude that first empties ``/tmp``, the commands' ``HOME`` (``FRESH_TMP``:
what one command leaves there, ``~/.gitconfig`` or a Python user site, cannot change what
a later one runs). The root filesystem is read-only (``/tmp`` is a private tmpfs), there is
no network unless allowed, and memory, CPU and process count are capped. ``.git`` and
``.co`` (every one, at any depth) and whatever else git would run from are mounted
read-only over the workspace (see ``protect``); what a command made that git would take
is moved aside after it.

When a command returns or times out, everything it started is killed: every process in
the container that runs as the command's uid (``kill -9 -1`` as that uid); if even that
cannot run (a fork bomb holding every process slot), the container is removed and made
again on the next command. Whether anything is left is read from this machine's kernel
when the engine runs here (``container_procs``: no request, so a command costs one exec),
else asked of the engine. Commands of Co sessions sharing a workspace take turns.

A missing ``.git`` (and, in a trusted folder, ``.co``) is held by a placeholder while the
container runs; such a container is removed when Co ends, even with
``shell.keep_container``, so that nothing of Co's stays in the workspace (and if Co is
killed, its keeper removes both). The read-only mounts hold on to what ``.git`` and
``.co`` were when the container started; if they are replaced on the host (``rm -rf .git && git init``), the container
would see the new one unprotected. So Co keeps each of them open while it uses the
container (their inode numbers cannot be reused meanwhile), compares them before every
command and rebuilds the container when they changed; a container left running by an
earlier session is reused only after its mount table shows both mounts still in place.

A command that only a read-only preset allowed runs in a second long-lived container of
the workspace, its *reader*, made on first use: the workspace mounted read-only, no
``/dev/shm``, ``/dev/mqueue`` read-only, so ``/tmp`` (emptied after every command, as in
the first) is the one place it can write. The same image, limits, uid and clean-up; a
command costs the same there, and the first one the reader's start.

``DOCKER_HOST`` (and the other ``DOCKER_*`` variables) pick the engine, so the sandbox
can live on another machine; the workspace path must then exist there too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from co_shell.sandbox import keeper, protect
from co_shell.sandbox.base import (
    READING_ENV,
    SHELL,
    WORKDIR,
    CommandResult,
    OutputCap,
    SandboxError,
    SandboxUnavailable,
    minimal_env,
    sandbox_ids,
    with_refusals,
)
from co_shell.sandbox.container_procs import CgroupView
from co_shell.settings import ShellSettings

KEEPALIVE = ["sleep", "2147483647"]
KILL_GRACE = 5.0  # seconds to wait for the stream to close after a kill
KILL_ROUNDS = 3  # ``kill -9 -1`` rounds before the container is removed instead
SETTLE = 0.5  # seconds for what a kill ended to be gone before the next round
# Every command runs behind this, in its own exec: /tmp (the commands' HOME) is emptied,
# unreadable folders included, then bash becomes the command (``exec``: same pid, same
# exit code, nothing of the prelude left). Nothing of an earlier command can refill /tmp
# meanwhile: each one's processes have all ended before ``run`` returned. An empty /tmp,
# the usual case, costs no process at all. Folders are made readable one by one (a
# symlink is not followed); ``rm`` is given ``/tmp`` itself, not ``/tmp/*``: no argument
# list to overflow (it empties the mount point, then fails to remove it, as it should).
FRESH_TMP = (
    "shopt -s dotglob nullglob; left=(/tmp/*); if (( ${#left[@]} )); then "
    'for f in "${left[@]}"; do [[ -d $f && ! -L $f ]] && chmod -R u+rwx -- "$f"; done '
    "2>/dev/null; rm -rf /tmp 2>/dev/null; left=(/tmp/*); fi; "
    '(( ${#left[@]} == 0 )) || { echo "$0: /tmp could not be emptied" >&2; exit 125; }; '
    'exec "$@"'
)
TMP_NOT_EMPTIED = 125  # the prelude's exit code when it did not run the command
PRELUDE_NAME = "co-sandbox"  # the prelude's $0, in its own error lines
MOUNT_TABLE = 'echo "$(< /proc/self/mountinfo)"'  # bash only: no other tool needed


def in_fresh_tmp(argv: list[str]) -> list[str]:
    """What a command's exec runs: the prelude that empties /tmp, then ``argv`` itself."""
    return [*SHELL, FRESH_TMP, PRELUDE_NAME, *argv]


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


def _short(exc: BaseException, width: int = 240) -> str:
    """The error's first line, cut at a word (never mid-word) when long."""
    import textwrap

    explanation = getattr(exc, "explanation", None)  # the engine's own words (APIError)
    text = (explanation if isinstance(explanation, str) else str(exc)).strip().splitlines()
    if not text:
        return type(exc).__name__
    return textwrap.shorten(f"{type(exc).__name__}: {text[0]}", width, placeholder=" …")


def _unescape(field: str) -> str:
    """A mount point as /proc/self/mountinfo writes it (space as \\040, ...), decoded."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _until_done(reader: threading.Thread, deadline: float, cancel: threading.Event | None) -> None:
    """Wait for the command's output to end, until the deadline or a cancel."""
    while reader.is_alive() and (cancel is None or not cancel.is_set()):
        left = deadline - time.perf_counter()
        if left <= 0:
            return
        reader.join(left if cancel is None else min(left, 0.05))


def container_name(workspace: Path, reading: bool = False) -> str:
    digest = hashlib.sha256(str(workspace).encode()).hexdigest()[:12]
    return f"co-sandbox-{digest}" + ("-ro" if reading else "")


class DockerSandbox:
    name = "docker"
    workdir = WORKDIR

    def __init__(
        self, settings: ShellSettings, workspace: Path, client: Any = None, *, reading: bool = False
    ) -> None:
        self.settings = settings
        self.workspace = Path(os.path.realpath(workspace))
        self.reading = reading  # the reader: the workspace mounted read-only
        self._reader: DockerSandbox | None = None  # made for the first read-only command
        self._owns_client = client is None
        self.client = client or connect()
        self.uid, self.gid = sandbox_ids()
        self._container: Any = None
        self._made_with = ""  # the config (protected names included) of ``_container``
        self._init_pid = ""  # the container's docker-init, as the engine's host sees it
        self._pins: list[int] = []  # .git and .co kept open while the container uses them
        self._used = False  # a container was made or reused (so placeholders may exist)
        self._held: protect.Held | None = None
        self._procs: CgroupView | None = None  # its processes, read from this machine
        self._lock = threading.Lock()

    # -- the container -------------------------------------------------------------------

    def _config(self, held: protect.Held) -> dict[str, Any]:
        s = self.settings
        return {
            "image": s.image,
            "workspace": str(self.workspace),
            "network": s.network,
            "memory": s.memory,
            "cpus": s.cpus,
            "pids": s.pids,
            "read_only": [list(entry) for entry in held.identity],
            **({"reading": True} if self.reading else {}),
        }

    def _mounts(self, held: protect.Held) -> list[Any]:
        """The workspace read-write, and what ``protect`` holds read-only over it (as
        mount objects: a path with a colon or a comma stays one path)."""
        from docker.types import Mount

        if self.reading:
            return [
                Mount(WORKDIR, str(self.workspace), type="bind", read_only=True),
                Mount("/dev/mqueue", None, type="tmpfs", read_only=True),
            ]
        mounts = [Mount(WORKDIR, str(self.workspace), type="bind")]
        for name in held.names:
            mounts.append(
                Mount(f"{WORKDIR}/{name}", str(self.workspace / name), type="bind", read_only=True)
            )
        return mounts

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
            from co_shell.sandbox.choice import bubblewrap_problem

            other = (
                "; or use bubblewrap, which works here: `co config set shell.sandbox bubblewrap`"
                if bubblewrap_problem() is None
                else ""
            )
            raise SandboxUnavailable(
                f"Docker image {self.settings.image!r} is not on {engine_address()} and could "
                f"not be pulled ({_short(exc)}); pull or build it (`docker pull "
                f"{self.settings.image}` where the registry is reachable), or set shell.image"
                + other
            ) from exc

    def container(self) -> Any:
        """The workspace's container, ready for a command: reused, adopted or (re)built."""
        import docker.errors

        if not self._used:  # before the first placeholder: gone even if Co is killed
            keeper.watch(self.workspace)
            self._tell_keeper(keep=False)
        # the reader holds nothing: its whole workspace is read-only
        held = protect.Held((), ()) if self.reading else protect.hold(self.workspace)
        self._held = held  # what the next command's clean-up compares with
        self._used = True  # placeholders may exist from here on
        config = json.dumps(self._config(held), sort_keys=True)
        if self._container is not None and config == self._made_with:
            return self._container
        self._forget()  # first command, or settings or .git/.co changed
        try:
            found = self.client.containers.get(container_name(self.workspace, self.reading))
        except docker.errors.NotFound:
            found = None
        if found is not None:
            if found.labels.get("co.config") == config and self._adopt(found, config, held):
                return self._container
            try:
                found.remove(force=True)  # settings changed, or a mount went stale
            except docker.errors.NotFound:
                pass
        made = self._create(held, config)
        try:
            if not self._mounts_in_place(made, held):
                raise SandboxUnavailable(
                    "the sandbox container started without its read-only .git and .co mounts"
                )
        except SandboxUnavailable:
            made.remove(force=True)
            raise
        return self._use(made, config, held)

    def _adopt(self, found: Any, config: str, held: protect.Held) -> bool:
        """Reuse a container an earlier session left: only with its mounts in place, and
        only after ending whatever a command of a session that died mid-way left running."""
        import docker.errors

        try:
            if found.status != "running":
                found.start()  # a fresh start mounts .git and .co afresh
            if not self._mounts_in_place(found, held):
                return False
        except docker.errors.APIError:
            return False  # e.g. no process slot left to look inside: start afresh
        self._use(found, config, held)
        self._end_leftovers(found)
        return self._container is not None

    def _create(self, held: protect.Held, config: str) -> Any:
        import docker.errors

        self._ensure_image()
        s = self.settings
        try:
            return self.client.containers.run(
                s.image,
                KEEPALIVE,
                name=container_name(self.workspace, self.reading),
                detach=True,
                init=True,
                user="0:0",
                labels={
                    "co.sandbox": "1",
                    "co.workspace": str(self.workspace),
                    "co.config": config,
                },
                mounts=self._mounts(held),
                working_dir=WORKDIR,
                network_mode="bridge" if s.network else "none",
                mem_limit=s.memory,
                memswap_limit=s.memory,
                nano_cpus=int(s.cpus * 1e9),
                pids_limit=s.pids,
                read_only=True,
                tmpfs={"/tmp": "rw,nosuid,nodev,size=256m,mode=1777"},
                ipc_mode="none" if self.reading else None,  # the reader: no /dev/shm
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                environment=minimal_env(),
                entrypoint=[],
            )
        except docker.errors.APIError as exc:
            detail = _short(exc).replace(str(self.workspace), "the workspace")
            raise SandboxUnavailable(f"could not start the sandbox container: {detail}") from exc

    def _mounts_in_place(self, container: Any, held: protect.Held) -> bool:
        """Bash runs in the image, and .git and .co are still mounted where they belong."""
        api = self.client.api
        user = f"{self.uid}:{self.gid}"
        exec_id = api.exec_create(container.id, [*SHELL, MOUNT_TABLE], user=user)["Id"]
        table = api.exec_start(exec_id).decode(errors="replace")
        if api.exec_inspect(exec_id).get("ExitCode") != 0:
            # the engine says: exec: "bash": executable file not found in $PATH
            if "bash" in table and "not found" in table:
                raise SandboxUnavailable(
                    f"the Docker image {self.settings.image!r} has no bash, which Co runs "
                    "commands with; use an image that has it (the default python:3.12-slim "
                    "does) or add it to yours (apt-get install bash, apk add bash), and set "
                    "shell.image"
                )
            return False  # could not look (e.g. no process slot left): not to be trusted
        mounted = {
            _unescape(line.split()[4]): line.split()[5].split(",")
            for line in table.splitlines()
            if len(line.split()) > 5
        }
        if self.reading:  # the workspace itself read-only
            return "ro" in mounted.get(WORKDIR, [])
        return all(f"{WORKDIR}/{name}" in mounted for name in held.names)

    def _keeps(self) -> bool:
        """Is the container left running when Co ends? Only as the user asked, and only
        when it holds no placeholder: nothing of Co's stays in the workspace."""
        held = self._held
        return self.settings.keep_container and held is not None and not held.placeholders

    def _tell_keeper(self, keep: bool) -> None:
        name = container_name(self.workspace, self.reading)
        keeper.container(self.workspace, name, keep, f"{self.uid}:{self.gid}")

    def _use(self, container: Any, config: str, held: protect.Held) -> Any:
        self._tell_keeper(self._keeps())
        container.reload()
        self._container, self._made_with = container, config
        self._init_pid = str(container.attrs["State"]["Pid"])
        self._procs = CgroupView.find(container.id, self._init_pid)
        for name in held.names:  # pinned: a replacement on the host gets another inode
            self._pins.append(os.open(self.workspace / name, os.O_PATH | os.O_NOFOLLOW))
        return container

    def _forget(self) -> None:
        self._container, self._made_with, self._init_pid = None, "", ""
        self._procs = None
        for fd in self._pins:
            os.close(fd)
        self._pins = []

    def prepare(self, *, read_only: bool = False) -> None:
        """Start (or check) the container now, so its placeholders predate the snapshot."""
        if read_only and not self.reading:
            self.reader().prepare()
            return
        with self._lock, protect.one_at_a_time(self.workspace):
            self.container()

    def reader(self) -> DockerSandbox:
        """The workspace's second container, for commands that run read-only."""
        if self._reader is None:
            self._reader = DockerSandbox(self.settings, self.workspace, self.client, reading=True)
        return self._reader

    # -- commands ------------------------------------------------------------------------

    def run(
        self,
        argv: list[str],
        timeout: float | None = None,
        cancel: threading.Event | None = None,
        *,
        read_only: bool = False,
    ) -> CommandResult:
        if read_only and not self.reading:
            return self.reader().run(argv, timeout, cancel)
        timeout = timeout or self.settings.timeout
        with self._lock, protect.one_at_a_time(self.workspace):
            result = self._run(argv, timeout, cancel)  # every process it started has ended
            held = self._held
            if held is None or self.reading:  # nothing can have been made in the reader
                return result
            return with_refusals(result, protect.refuse_new(self.workspace, held))

    def _run(
        self, argv: list[str], timeout: float, cancel: threading.Event | None
    ) -> CommandResult:
        """One exec: /tmp emptied, the command run; then whatever it left is ended."""
        api = self.client.api
        user = f"{self.uid}:{self.gid}"
        started = time.perf_counter()
        for attempt in (1, 2):
            container = self.container()
            if cancel is not None and cancel.is_set():  # cancelled while it started
                return CommandResult(137, "", cancelled=True)
            try:
                exec_id = api.exec_create(
                    container.id,
                    in_fresh_tmp(argv),
                    user=user,
                    workdir=WORKDIR,
                    environment=minimal_env(READING_ENV if self.reading else None),
                )["Id"]
                stream = api.exec_start(exec_id, stream=True)
                break
            except Exception as exc:
                self._forget()  # removed or stopped behind our back: make it again
                if attempt == 2:
                    detail = _short(exc).replace(str(self.workspace), "the workspace")
                    raise SandboxError(
                        f"the sandbox failed to start the command: {detail}"
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
        _until_done(reader, started + timeout, cancel)
        cancelled = cancel is not None and cancel.is_set()
        timed_out = reader.is_alive() and not cancelled
        self._end_leftovers(container)
        reader.join(KILL_GRACE)
        try:
            code = api.exec_inspect(exec_id).get("ExitCode")
        except Exception:
            code = None  # the container was removed to end what the command left
        output = cap.text()
        if code == TMP_NOT_EMPTIED and output == f"{PRELUDE_NAME}: /tmp could not be emptied\n":
            self._remove(container)  # the next command gets a new container and /tmp
            raise SandboxError(
                "the sandbox could not empty /tmp before the command, so it did not run; "
                "the container is made anew for the next command"
            )
        return CommandResult(
            exit_code=137 if code is None or timed_out or cancelled else int(code),
            output=output,
            cut=cap.cut,
            timed_out=timed_out,
            seconds=time.perf_counter() - started,
            cancelled=cancelled,
        )

    def _leftovers(self, container: Any) -> list[str]:
        """Live processes in the container other than its own (docker-init and keep-alive),
        from this machine's kernel where it can tell, else from the engine."""
        if self._procs is not None:
            found = self._procs.others()
            if found is not None:
                return found
        return self._engine_leftovers(container)

    def _engine_leftovers(self, container: Any) -> list[str]:
        """The same, as the engine sees it (``docker top``: it runs ``ps`` on its host)."""
        found = self.client.api.top(container.id)
        titles = found["Titles"]
        pid, uid, cmd = titles.index("PID"), titles.index("UID"), titles.index("CMD")
        rows = found["Processes"] or []
        owner = next(row[uid] for row in rows if row[pid] == self._init_pid)
        return [r[pid] for r in rows if r[uid] != owner and not r[cmd].endswith("<defunct>")]

    def _gone(self, container: Any, wait: float) -> bool:
        """Nothing a command started runs in the container, looking again for up to
        ``wait`` seconds (what was killed a moment ago may take that long to end)."""
        deadline = time.monotonic() + wait
        while self._leftovers(container):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def _end_leftovers(self, container: Any) -> None:
        """Kill every process the command left; remove the container if that cannot be
        done."""
        api = self.client.api
        user = f"{self.uid}:{self.gid}"
        try:
            for round_ in range(KILL_ROUNDS + 1):  # a last look after the last kill
                if self._gone(container, wait=SETTLE if round_ else 0.0):
                    return
                if round_ < KILL_ROUNDS:
                    kill = api.exec_create(container.id, [*SHELL, "kill -9 -1"], user=user)
                    api.exec_start(kill["Id"])
        except Exception:
            pass  # the engine could not start the kill (no process slot left) or look
        self._remove(container)

    def _remove(self, container: Any) -> None:
        """Remove the container (and what runs in it); the next command makes a new one."""
        try:
            container.remove(force=True)
        except Exception:
            pass
        self._forget()

    def close(self) -> None:
        """Remove the container unless the user wants it kept and it holds no placeholder;
        placeholders go with it."""
        import docker.errors

        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._used:
            with self._lock, protect.one_at_a_time(self.workspace):
                try:
                    found = self.client.containers.get(container_name(self.workspace, self.reading))
                    if not self._keeps():
                        found.remove(force=True)
                        found = None
                except docker.errors.NotFound:
                    found = None
                except Exception:
                    found = "unknown"  # the engine went away: leave the placeholders be
                if found is None and not self.reading:  # no container relies on them
                    protect.release(self.workspace)
                if found != "unknown" and not self.reading:  # the reader goes first
                    keeper.cleaned(self.workspace)
            self._used = False
        self._forget()
        if not self._owns_client:
            return  # the reader shares its sandbox's client
        try:
            self.client.close()
        except Exception:
            pass
