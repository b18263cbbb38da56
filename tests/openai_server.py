"""A tiny OpenAI-compatible chat server for tests: speaks the Chat Completions wire format
(JSON and server-sent events), records every request, and answers from a script."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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


class Server:
    def __init__(self, script: Callable[[dict[str, Any]], Reply]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._json(200, {"object": "list", "data": [{"id": "m", "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                reply = outer.script(body)
                if "status" in reply:
                    self._json(reply["status"], reply.get("body", {"error": {"message": "boom"}}))
                    return
                message = _message(reply)
                finish = "tool_calls" if "tool" in reply else "stop"
                base = {"id": "x", "created": int(time.time()), "model": body["model"]}
                if not body.get("stream"):
                    self._json(200, {**base, "object": "chat.completion",
                                     "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                     "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})  # fmt: skip
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
                self.wfile.write(b"data: [DONE]\n\n")

            def _json(self, status: int, data: Any) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

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
