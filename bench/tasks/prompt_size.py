"""The size of Co's first model request for "Say hi", whatever the model would answer.

    uv run python bench/tasks/prompt_size.py
    uv run python bench/tasks/prompt_size.py --count-url http://HOST:PORT/v1 --count-model NAME

Co runs ``co ask --json "Say hi"`` in the suite's scratch world (every installed plugin,
none set up but the vault and sandbox) against a recorder: a tiny OpenAI-compatible
server that keeps the request body and answers "Hi!". The recorded request (system
prompt, messages, tool schemas) is then sent, unchanged but for ``max_tokens: 1``, to a
real server, whose ``usage.prompt_tokens`` is the size in that model's tokens and chat
format: by default the embedded SmolLM2 under llama.cpp, started here as Co's ``local``
model starts it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import ask_command, prepare  # noqa: E402
from tasks import TASKS  # noqa: E402


def _chunk(delta: dict[str, Any], finish: str | None, usage: bool = False) -> bytes:
    body: dict[str, Any] = {
        "id": "rec",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "recorder",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class Recorder(BaseHTTPRequestHandler):
    """Keeps every chat request's JSON body; answers "Hi!" (streamed or whole)."""

    bodies: list[dict[str, Any]] = []

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        Recorder.bodies.append(body)
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(_chunk({"role": "assistant", "content": "Hi!"}, None))
            self.wfile.write(_chunk({}, "stop", usage=True))
            self.wfile.write(b"data: [DONE]\n\n")
            return
        answer = {
            "id": "rec",
            "object": "chat.completion",
            "created": 0,
            "model": "recorder",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "Hi!"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def record_first_request(prompt_task: str = "chat-hi") -> dict[str, Any]:
    """Run ``co ask`` against the recorder; the body of its first model request."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    task = next(t for t in TASKS if t.name == prompt_task)
    root = Path(tempfile.mkdtemp(prefix="co-prompt-size-"))
    try:
        scratch = prepare(root, task, 0)
        command = ask_command(task, scratch.ctx, "openai-compatible:recorder", url)
        done = subprocess.run(
            command,
            cwd=scratch.ctx.workspace,
            env=scratch.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if not Recorder.bodies:
            sys.exit(f"prompt_size.py: co made no request: {done.stderr.strip()[-300:]}")
        return Recorder.bodies[0]
    finally:
        server.shutdown()
        shutil.rmtree(root, ignore_errors=True)


def count_tokens(body: dict[str, Any], url: str, model: str) -> tuple[int, float]:
    """``usage.prompt_tokens`` of the same request on a real server (one token generated),
    and the seconds it took: about the server's prompt processing, a gauge of the machine."""
    import httpx

    request = dict(body, model=model, stream=False, max_tokens=1)
    request.pop("stream_options", None)
    start = time.monotonic()
    reply = httpx.post(f"{url.rstrip('/')}/chat/completions", json=request, timeout=600)
    reply.raise_for_status()
    return int(reply.json()["usage"]["prompt_tokens"]), time.monotonic() - start


def count_on_local(body: dict[str, Any]) -> tuple[tuple[int, float], str]:
    """Start the embedded model's server as Co does (``local``), count, stop it."""
    import os

    from co_core.agent.local import server as local_model

    gguf = local_model.default_gguf()
    if gguf is None or not local_model.installed():
        sys.exit("prompt_size.py: the local model is not installed (uv sync --all-extras)")
    with tempfile.TemporaryDirectory(prefix="co-prompt-size-") as data:
        os.environ["CO_DATA_DIR"] = data  # the server's log goes there
        server = local_model.LocalServer(model_path=gguf)
        try:
            return count_tokens(body, server.start(), "local"), gguf.name
        finally:
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count-url", help="OpenAI-compatible /v1 URL to count tokens on")
    parser.add_argument("--count-model", default="local", help="model name for --count-url")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()

    body = record_first_request()
    tools = body.get("tools") or []
    system = "\n".join(
        str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system"
    )
    if args.count_url:
        counted, counted_on = count_tokens(body, args.count_url, args.count_model), args.count_url
    else:
        counted, counted_on = count_on_local(body)
    tokens, seconds = counted
    result = {
        "tools": len(tools),
        "tool_schema_chars": len(json.dumps(tools)),
        "system_prompt_chars": len(system),
        "request_chars": len(json.dumps(body)),
        "prompt_tokens": tokens,
        "counted_on": counted_on,
        "count_seconds": round(seconds, 1),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f'first request of co ask "Say hi" (counted on {counted_on})')
        print(f"  tools offered        {result['tools']}")
        print(f"  tool schemas         {result['tool_schema_chars']} chars")
        print(f"  system prompt        {result['system_prompt_chars']} chars")
        print(f"  whole request body   {result['request_chars']} chars")
        print(f"  prompt tokens        {result['prompt_tokens']}")
        print(f"  server took          {result['count_seconds']} s for it (max_tokens 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
