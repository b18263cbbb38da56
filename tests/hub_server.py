"""A stand-in for the Hugging Face Hub, speaking its wire format, for ``HF_ENDPOINT``.

What ``huggingface_hub`` and Co's download rely on, as the hub answers it:

- ``HEAD``/``GET /{repo}/resolve/{revision}/{file}``: for a file kept in LFS, a ``302`` to
  the CDN with ``X-Repo-Commit``, ``X-Linked-Etag`` (the LFS sha256, quoted),
  ``X-Linked-Size`` and ``ETag``; ``X-Error-Code`` ``RepoNotFound`` (401),
  ``RevisionNotFound`` / ``EntryNotFound`` (404) or ``GatedRepo`` (403) otherwise;
- the CDN (another host: a second port here) serves the bytes, ``Range: bytes=N-``
  answered ``206`` with ``Content-Range``;
- ``GET /api/models/{repo}[/revision/{revision}]``: the model's JSON, ``siblings`` with
  each file's ``size`` and ``lfs.sha256``.

Every request is recorded; ``cut_after`` ends the first CDN response early (a dropped
connection), ``sha_claim`` makes the hub claim another sha256 than the bytes have.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class HubRepo:
    files: dict[str, Path]  # file name -> the bytes to serve
    commit: str = COMMIT
    gated: bool = False
    sha_claim: dict[str, str] = field(default_factory=dict)  # file -> sha256 the hub says


class Hub:
    """Two loopback servers: the hub (``endpoint``) and its CDN."""

    def __init__(self, repos: dict[str, HubRepo], cut_after: int | None = None) -> None:
        self.repos = repos
        self.cut_after = cut_after
        self.requests: list[dict[str, Any]] = []
        self._sha: dict[Path, str] = {}
        self.hub = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(cdn=False))
        self.cdn = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(cdn=True))

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.hub.server_address[1]}"

    @property
    def cdn_url(self) -> str:
        return f"http://127.0.0.1:{self.cdn.server_address[1]}"

    def sha256(self, path: Path) -> str:
        if path not in self._sha:
            self._sha[path] = hashlib.sha256(path.read_bytes()).hexdigest()
        return self._sha[path]

    def cdn_gets(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["cdn"] and r["method"] == "GET"]

    def __enter__(self) -> Hub:
        for server in (self.hub, self.cdn):
            threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        for server in (self.hub, self.cdn):
            server.shutdown()
            server.server_close()

    def _handler(self, cdn: bool) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                self._serve(body=False)

            def do_GET(self) -> None:
                self._serve(body=True)

            def _serve(self, body: bool) -> None:
                path = unquote(urlsplit(self.path).path)
                hub.requests.append(
                    {
                        "cdn": cdn,
                        "method": self.command,
                        "path": path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                    }
                )
                if cdn:
                    self._cdn(path, body)
                elif path.startswith("/api/models/"):
                    self._api(path[len("/api/models/") :])
                else:
                    self._resolve(path, body)

            def _error(self, status: int, code: str, message: str) -> None:
                raw = json.dumps({"error": message}).encode()
                self.send_response(status)
                self.send_header("X-Error-Code", code)
                self.send_header("X-Error-Message", message)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _find(self, repo_id: str, revision: str) -> HubRepo | None:
                repo = hub.repos.get(repo_id)
                if repo is None:
                    self._error(401, "RepoNotFound", "Repository not found")
                    return None
                if revision not in ("main", repo.commit):
                    self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
                    return None
                if repo.gated and "authorization" not in {k.lower() for k in self.headers}:
                    self._error(403, "GatedRepo", "Access to this model is restricted")
                    return None
                return repo

            def _resolve(self, path: str, body: bool) -> None:
                found = re.match(r"^/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$", path)
                if found is None:
                    self._error(404, "EntryNotFound", "not found")
                    return
                repo_id, revision, name = found.groups()
                repo = self._find(repo_id, revision)
                if repo is None:
                    return
                if name not in repo.files:
                    self._error(404, "EntryNotFound", f"{name} does not exist")
                    return
                data = repo.files[name]
                sha = repo.sha_claim.get(name) or hub.sha256(data)
                self.send_response(302)
                self.send_header("Location", f"{hub.cdn_url}/xet/{hub.sha256(data)}?sig=abc")
                self.send_header("X-Repo-Commit", repo.commit)
                self.send_header("X-Linked-Etag", f'"{sha}"')
                self.send_header("X-Linked-Size", str(data.stat().st_size))
                self.send_header("ETag", f'"{hashlib.sha1(data.name.encode()).hexdigest()}"')
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _cdn(self, path: str, body: bool) -> None:
                sha = path.rsplit("/", 1)[-1]
                data = next(
                    (
                        p
                        for r in hub.repos.values()
                        for p in r.files.values()
                        if hub.sha256(p) == sha
                    ),
                    None,
                )
                if data is None:
                    self._error(404, "EntryNotFound", "no such object")
                    return
                raw = data.read_bytes()
                start = 0
                ranged = re.match(r"bytes=(\d+)-$", self.headers.get("Range", ""))
                if ranged:
                    start = int(ranged.group(1))
                    if start >= len(raw):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(raw)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(raw) - 1}/{len(raw)}")
                else:
                    self.send_response(200)
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(raw) - start))
                self.end_headers()
                if not body:
                    return
                cut, hub.cut_after = hub.cut_after, None
                if cut is not None:  # the connection drops part of the way
                    self.wfile.write(raw[start : start + cut])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                self.wfile.write(raw[start:])

            def _api(self, rest: str) -> None:
                found = re.match(r"^([^/]+/[^/]+)(?:/revision/([^/]+))?$", rest)
                if found is None:
                    self._error(404, "EntryNotFound", "not found")
                    return
                repo_id, revision = found.group(1), found.group(2) or "main"
                repo = self._find(repo_id, revision)
                if repo is None:
                    return
                siblings = [
                    {
                        "rfilename": name,
                        "size": path.stat().st_size,
                        "blobId": hashlib.sha1(path.name.encode()).hexdigest(),
                        "lfs": {
                            "sha256": hub.sha256(path),
                            "size": path.stat().st_size,
                            "pointerSize": 134,
                        },
                    }
                    for name, path in repo.files.items()
                ]
                info = {
                    "_id": "0" * 24,
                    "id": repo_id,
                    "modelId": repo_id,
                    "sha": repo.commit,
                    "private": False,
                    "gated": repo.gated,
                    "disabled": False,
                    "tags": ["gguf"],
                    "siblings": siblings,
                }
                raw = json.dumps(info).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        return Handler
