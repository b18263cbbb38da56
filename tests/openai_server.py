"""A tiny OpenAI-compatible chat server for tests: speaks the Chat Completions wire format
(JSON and server-sent events), records every request, and answers from a script.

Like OpenAI's API, each answer has an id of its own and reports its usage: in the JSON
answer, and in a last chunk of a stream when the request asks for it
(``stream_options.include_usage``). Other paths answer 404, as a real server's do. Optionally it reports ``prompt_tokens`` as
a given function counts the request (``usage``), and tokenizes as llama.cpp's server does
(``POST /tokenize {"content": ...}`` -> ``{"tokens": [...]}``, with ``tokenize``)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}  # unless counted


Reply = dict[
    str, Any
]  # {"text": ...} or {"tool": name, "args": {...}} or {"status": 500, "body": ...}


def _message(reply: Reply) -> dict[str, Any]:
    if "tool" in reply:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": reply.get("id", "call_1"),
                    "type": "function",
                    "function": {"name": reply["tool"], "arguments": json.dumps(reply["args"])},
                }
            ],
        }
    return {"role": "assistant", "content": reply["text"]}


def send_json(handler: BaseHTTPRequestHandler, status: int, data: Any) -> None:
    raw = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


class Server:
    """``models``: what ``GET /v1/models`` lists (llama-server adds ``meta.n_params``);
    ``show``: Ollama's ``POST /api/show`` answer (None: 404, as other servers)."""

    def __init__(
        self,
        script: Callable[[dict[str, Any]], Reply],
        *,
        usage: Callable[[dict[str, Any]], int] | None = None,
        tokenize: Callable[[str], list[int]] | None = None,
        models: list[dict[str, Any]] | None = None,
        show: dict[str, Any] | None = None,
    ) -> None:
        self.script = script
        self.models = models or [{"id": "m", "object": "model"}]
        self.show = show
        self.requests: list[dict[str, Any]] = []
        self.tokenized: list[str] = []  # every text POSTed to /tokenize
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._json(200, {"object": "list", "data": outer.models})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path == "/tokenize" and tokenize is not None:
                    outer.tokenized.append(body["content"])
                    self._json(200, {"tokens": tokenize(body["content"])})
                    return
                if self.path.endswith("/api/show"):
                    if outer.show is None:
                        self._json(404, {"error": "not found"})
                    else:
                        self._json(200, outer.show)
                    return
                if not self.path.endswith("/chat/completions"):
                    self._json(404, {"detail": "Not Found"})
                    return
                outer.requests.append(body)
                reply = outer.script(body)
                if "status" in reply:
                    self._json(reply["status"], reply.get("body", {"error": {"message": "boom"}}))
                    return
                message = _message(reply)
                finish = "tool_calls" if "tool" in reply else "stop"
                answer_id = f"chatcmpl-{len(outer.requests)}"
                prompt = usage(body) if usage is not None else USAGE["prompt_tokens"]
                counts = {
                    "prompt_tokens": prompt,
                    "completion_tokens": USAGE["completion_tokens"],
                    "total_tokens": prompt + USAGE["completion_tokens"],
                }
                base = {"id": answer_id, "created": int(time.time()), "model": body["model"]}
                if not body.get("stream"):
                    self._json(200, {**base, "object": "chat.completion",
                                     "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                     "usage": counts})  # fmt: skip
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                delta = dict(message)
                if "tool_calls" in delta:
                    delta["tool_calls"] = [{"index": 0, **delta["tool_calls"][0]}]
                for chunk in (
                    {"index": 0, "delta": delta, "finish_reason": None},
                    {"index": 0, "delta": {}, "finish_reason": finish},
                ):
                    data = {**base, "object": "chat.completion.chunk", "choices": [chunk]}
                    self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                if (body.get("stream_options") or {}).get("include_usage"):
                    data = {
                        **base,
                        "object": "chat.completion.chunk",
                        "choices": [],
                        "usage": counts,
                    }
                    self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

            def _json(self, status: int, data: Any) -> None:
                send_json(self, status, data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
