"""What a sandbox placed in a workspace goes when Co goes, however Co ends.

Co removes what the sandboxes make as soon as it is no longer needed: the placeholders
that hold a missing ``.git`` and ``.co`` (``protect``) when a bubblewrap command ends, the
Docker container (and its placeholders) when the session closes, also on Ctrl+C, SIGTERM
or a closed terminal. A Co that is killed outright (``kill -9``, the OOM killer, a crash)
cannot. So the first sandbox of a Co starts this keeper, ``python -m
co_shell.sandbox.keeper``, in a session of its own, with a pipe as its stdin: Co names
each workspace (and container) before it places anything there, and says when it has
cleaned up itself. However Co ends, the kernel closes Co's end of the pipe; the keeper
reads EOF and, for every workspace Co did not clean up, waits its turn for the workspace
(the lock commands take), removes the container (or, when the user keeps it, ends what
still runs in it), removes the placeholders that are still empty and this Co's cgroups,
then exits. After a clean exit there is nothing left to do, and it exits at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

_lock = threading.Lock()
_pipe: IO[bytes] | None = None


def tell(**message: Any) -> None:
    """Say something to this Co's keeper (started on first use); never fails a command."""
    global _pipe
    line = (json.dumps(message) + "\n").encode()
    with _lock:
        try:
            if _pipe is None:
                process = subprocess.Popen(
                    [sys.executable, "-m", "co_shell.sandbox.keeper"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    cwd="/",
                    start_new_session=True,  # Ctrl+C and a closed terminal do not reach it
                )
                _pipe = process.stdin
            assert _pipe is not None
            _pipe.write(line)
            _pipe.flush()
        except OSError:  # no keeper: Co still cleans up whenever it ends on its own
            pass


def watch(workspace: Path) -> None:
    """Co may place something in ``workspace`` from now on."""
    from co_core import ProcessId

    tell(workspace=str(workspace), owner=ProcessId.me().token())


def container(workspace: Path, name: str, keep: bool, user: str) -> None:
    """``workspace``'s Docker container is in use (``keep``: the user keeps it)."""
    tell(workspace=str(workspace), container=name, keep=keep, user=user)


def cleaned(workspace: Path) -> None:
    """Co cleaned ``workspace`` up itself: nothing is left for the keeper there."""
    tell(cleaned=str(workspace))


# -- the keeper process ---------------------------------------------------------------


def _read(stream: IO[bytes]) -> dict[str, dict[str, Any]]:
    """Every workspace Co named and did not clean up, with what is known of it."""
    left: dict[str, dict[str, Any]] = {}
    for raw in stream:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if "cleaned" in message:
            left.pop(str(message["cleaned"]), None)
        elif "container" in message:  # a workspace may have two: its own and the reader
            facts = left.setdefault(str(message["workspace"]), {})
            facts.setdefault("containers", {})[str(message["container"])] = message
        elif "workspace" in message:
            left.setdefault(str(message["workspace"]), {}).update(message)
    return left


def _docker(name: str, keep: bool, user: str) -> None:
    """Remove the container; a kept one only loses what still runs as the command's user."""
    from co_shell.sandbox.base import SHELL
    from co_shell.sandbox.docker_sandbox import connect

    client = connect(timeout=30)
    try:
        found = client.containers.get(name)
        if not keep:
            found.remove(force=True)
            return
        kill = client.api.exec_create(found.id, [*SHELL, "kill -9 -1"], user=user)
        client.api.exec_start(kill["Id"])
    finally:
        client.close()


def _clean(workspace: Path, facts: dict[str, Any]) -> None:
    from co_shell.sandbox import protect

    with protect.one_at_a_time(workspace):
        containers = facts.get("containers", {})
        for name, said in containers.items():
            try:
                _docker(name, bool(said.get("keep")), str(said.get("user", "")))
            except Exception:
                return  # the engine is gone: the container may still rely on them
        if any(said.get("keep") for said in containers.values()):
            return  # the kept container relies on its placeholders
        protect.release(workspace)


def main() -> None:
    left = _read(sys.stdin.buffer)  # until Co has gone
    for workspace, facts in left.items():
        try:
            _clean(Path(workspace), facts)
        except Exception:
            continue
    owners = {str(facts["owner"]) for facts in left.values() if facts.get("owner")}
    for owner in owners:
        try:
            from co_shell.sandbox.cgroups import reap

            reap(gone=owner)  # its cgroups, now that it is gone (even if not yet reaped)
        except Exception:
            pass


if __name__ == "__main__":
    os.nice(5)
    main()
