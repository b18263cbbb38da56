"""Run a Python module for exactly as long as the Co that started it: ``python -m
co_core.agent.local.tether MODULE ARGS...``.

Co starts the local model server through this wrapper with a pipe as its stdin and never
writes to it. However Co ends (it exits, crashes, is killed with ``kill -9`` or loses its
terminal), the kernel closes Co's end of the pipe; the read below then returns EOF and the
server exits at once, so it cannot outlive Co.

Why a pipe and not Linux's parent-death signal (``prctl(PR_SET_PDEATHSIG)``): that signal
follows the *thread* that started the child, and Co starts the server from a background
thread that ends long before Co does. The pipe follows the process, on every POSIX system.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading


def _exit_when_orphaned() -> None:
    try:
        while os.read(0, 4096):
            pass  # Co never writes; anything read is ignored
    except OSError:
        pass
    os._exit(0)  # nothing to save: the model is only in memory


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit("usage: python -m co_core.agent.local.tether MODULE [ARGS...]")
    threading.Thread(target=_exit_when_orphaned, name="co-tether", daemon=True).start()
    module, *args = argv
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
