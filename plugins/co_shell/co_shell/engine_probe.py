"""A light Docker Engine API client for ``co status``: stdlib only, so status stays fast.

docker-py costs a noticeable import; a health check needs two GET requests. Engines
behind TLS or SSH are left to docker-py (``None`` here means "probe it the heavy way").
"""

from __future__ import annotations

import http.client
import json
import os
import socket
from typing import Any
from urllib.parse import quote, urlparse


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def _connection(timeout: float) -> http.client.HTTPConnection | None:
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if os.environ.get("DOCKER_TLS_VERIFY"):
        return None
    url = urlparse(host)
    if url.scheme == "unix":
        return _UnixConnection(url.path, timeout)
    if url.scheme in ("tcp", "http"):
        return http.client.HTTPConnection(
            url.hostname or "localhost", url.port or 2375, timeout=timeout
        )
    return None


def get(path: str, timeout: float = 3.0) -> tuple[int, Any] | None:
    """GET an Engine API path: (status, parsed JSON); None when only docker-py can reach the engine."""
    connection = _connection(timeout)
    if connection is None:
        return None
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    try:
        return response.status, json.loads(body or b"null")
    except ValueError:
        return response.status, None


def image_path(image: str) -> str:
    return f"/images/{quote(image, safe='')}/json"
