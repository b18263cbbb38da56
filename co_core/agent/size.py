"""How big a served model is, asked of its server (a second at most; None when unknown).

Ollama says it in ``/api/show`` (``general.parameter_count``, or ``details.parameter_size``
such as "1.5B"); llama.cpp's ``llama-server`` in ``/v1/models`` (``meta.n_params``).
Other servers do not say; their models are steered only when the user asks
(``steering.mode``).
"""

from __future__ import annotations

import re
from typing import Any

TIMEOUT = 1.0
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMBT])\s*$", re.I)
_UNIT = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


def parse_size(text: Any) -> float | None:
    """``"135M"`` -> 1.35e8, ``"1.5B"`` -> 1.5e9; None for anything else ("8x7B", "")."""
    match = _SIZE.match(str(text or ""))
    if match is None:
        return None
    return float(match.group(1)) * _UNIT[match.group(2).upper()]


def ollama_parameters(host: str, name: str, timeout: float = TIMEOUT) -> float | None:
    import httpx

    try:
        reply = httpx.post(f"{host.rstrip('/')}/api/show", json={"model": name}, timeout=timeout)
        data = reply.json() if reply.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return None
    count = (data.get("model_info") or {}).get("general.parameter_count")
    if isinstance(count, (int, float)) and count > 0:
        return float(count)
    return parse_size((data.get("details") or {}).get("parameter_size"))


def server_parameters(base_url: str, name: str, timeout: float = TIMEOUT) -> float | None:
    import httpx

    try:
        reply = httpx.get(f"{base_url.rstrip('/')}/models", timeout=timeout)
        data = reply.json() if reply.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        return None
    found = data.get("data") if isinstance(data, dict) else None
    models: list[Any] = found if isinstance(found, list) else []
    for item in models:
        if not isinstance(item, dict):
            continue
        count = (item.get("meta") or {}).get("n_params")
        if isinstance(count, (int, float)) and count > 0 and item.get("id") in (name, None):
            return float(count)
        if isinstance(count, (int, float)) and count > 0 and len(models) == 1:
            return float(count)  # one model served: whatever it is called
    return None
