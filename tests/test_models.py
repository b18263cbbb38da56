"""Model resolution and the OpenAI-compatible quirks, against a local server on the wire."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from openai_server import Server

from co_core.agent.models import NO_MODEL, auto_choice, resolve
from co_core.kernel.errors import CoError
from co_core.testing import make_app


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def co(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).parent / "co"), *args],
        input=stdin or "",
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def tool_then_text(body: dict[str, Any]) -> dict[str, Any]:
    if body["messages"][-1]["role"] == "tool":
        return {"text": "sum is " + body["messages"][-1]["content"]}
    return {"tool": "add_numbers", "args": {"a": 2, "b": 3}}


@pytest.mark.usefixtures("testplug")
def test_openai_compatible_round_trip_sends_empty_content_and_no_forced_tool_choice() -> None:
    with Server(tool_then_text) as server:
        result = co(
            "ask",
            "--json",
            "-m",
            "openai-compatible:tiny",
            "--base-url",
            server.base_url,
            "add 2 and 3",
        )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["output"] == "sum is 5"
    assert data["tool_calls"] == [
        {
            "tool": "add_numbers",
            "args": {"a": 2, "b": 3},
            "permission": "testplug:add_numbers",
            "decision": "allow",
            "reason": "default for read-risk tools",  # the policy engine's default
            "status": "ok",
            "from_text": False,
        }
    ]
    second = server.requests[1]
    assistant = [m for m in second["messages"] if m["role"] == "assistant"][0]
    assert assistant["content"] == ""  # llama.cpp rejects null
    assert all(r.get("tool_choice") in (None, "auto") for r in server.requests)
    assert {t["function"]["name"] for t in server.requests[0]["tools"]} >= {"lookup", "add_numbers"}


@pytest.mark.usefixtures("testplug")
def test_server_that_cannot_stream_with_tools_gets_whole_requests() -> None:
    def script(body: dict[str, Any]) -> dict[str, Any]:
        if body.get("stream") and body.get("tools"):
            return {
                "status": 500,
                "body": {"error": {"message": "Automatic streaming tool choice is not supported"}},
            }
        return tool_then_text(body)

    with Server(script) as server:
        result = co("ask", "-m", "openai-compatible:tiny", "--base-url", server.base_url, "add")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "sum is 5"
    streamed = [bool(r.get("stream")) for r in server.requests]
    assert streamed[0] and streamed[-2:] == [False, False]  # (the SDK retries a 500 itself)


@pytest.mark.usefixtures("testplug")
def test_http_error_is_one_line_with_hint_and_exit_1() -> None:
    with Server(
        lambda body: {"status": 404, "body": {"error": {"message": "model 'nope' not found"}}}
    ) as server:
        result = co("ask", "-m", "openai-compatible:nope", "--base-url", server.base_url, "hi")
    assert result.returncode == 1
    assert "HTTP 404" in result.stderr and "hint:" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.usefixtures("testplug")
def test_unreachable_server_is_one_line_and_json_reports_it() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = co("ask", "--json", "-m", "openai-compatible:x", "--base-url", url, "hi")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["error"].startswith("cannot reach") and "running" in data["hint"]
    assert "Traceback" not in result.stderr


@pytest.mark.usefixtures("testplug")
def test_ask_usage_errors_exit_2_and_stdin_is_read() -> None:
    assert co("ask").returncode == 2
    assert co("ask", "--no-such-flag", "x").returncode == 2
    piped = co("ask", "-m", "function:co_scripts:chat", "summarise", stdin="line from a pipe\n")
    assert piped.returncode == 0
    assert "summarise" in piped.stdout and "line from a pipe" in piped.stdout


@pytest.mark.usefixtures("testplug")
def test_ask_with_bad_settings_is_a_usage_error(testplug: Path) -> None:
    (testplug / "settings.json").write_text('{"request_limit": "lots"}')
    result = co("ask", "-m", "function:co_scripts:chat", "hi")
    assert result.returncode == 2
    assert "request_limit" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.usefixtures("testplug")
def test_ask_without_terminal_denies_calls_needing_approval(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(Path(sys.executable).parent / "co"), "ask", "--json", "-m", "function:co_scripts:chat", "write n.txt hi"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    data = json.loads(result.stdout)
    assert data["tool_calls"][0]["decision"] == "deny"
    assert "no terminal" in data["tool_calls"][0]["reason"]
    assert "write_note was not run" in data["output"] and "--yolo" in data["output"]
    assert not (tmp_path / "n.txt").exists()
    yolo = subprocess.run(
        [str(Path(sys.executable).parent / "co"), "ask", "--yolo", "-m", "function:co_scripts:chat", "write n.txt hi"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert (tmp_path / "n.txt").read_text() == "hi"
    assert "--yolo" in yolo.stderr


def test_model_errors_say_how_to_fix_them(co_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("CO_BASE_URL", raising=False)
    settings = make_app({}).settings
    with pytest.raises(CoError, match="--base-url"):
        resolve("openai-compatible:x", settings)
    with pytest.raises(CoError, match="GEMINI_API_KEY"):
        resolve("gemini:gemini-2.5-flash", settings)
    with pytest.raises(CoError, match="provider:name"):
        resolve("nonsense", settings)
    with pytest.raises(CoError, match="nosuchprovider"):
        resolve("nosuchprovider:model", settings)


def test_auto_choice_prefers_ollama_then_gemini_then_local(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Tags(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/api/tags" else 404)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Tags)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{httpd.server_address[1]}")
        assert auto_choice(make_app({}).settings) == "ollama:qwen3:4b"
    finally:
        httpd.shutdown()
        httpd.server_close()
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    assert auto_choice(make_app({}).settings) == "gemini:gemini-2.5-flash"
    monkeypatch.delenv("GEMINI_API_KEY")
    from co_core.agent.local import server as local_model

    if local_model.installed() and local_model.default_gguf():
        assert auto_choice(make_app({}).settings) == "local"
    else:
        with pytest.raises(CoError) as caught:
            auto_choice(make_app({}).settings)
        assert str(caught.value) == NO_MODEL


def test_no_model_message_lists_three_ways() -> None:
    assert "Ollama" in NO_MODEL and "GEMINI_API_KEY" in NO_MODEL and "co-core[local]" in NO_MODEL


def test_co_help_does_not_import_pydantic_ai(co_dirs: Path) -> None:
    code = (
        "import sys\nfrom co_core.cli.main import main\nsys.argv=['co','--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "assert 'pydantic_ai' not in sys.modules, 'pydantic_ai imported'\nprint('light')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert "light" in result.stdout, result.stderr
    assert "chat" in result.stdout and "ask" in result.stdout
