"""co-core's optional parts (pip extras): is one installed, and one line saying how to get it.

``pip install co-core`` holds what the default paths need; model SDKs other than OpenAI's,
the MCP client and server, the OTLP exporter (and Datasette, for ``co logs``) are extras (pyproject.toml). A
feature that needs a missing one stops with :func:`require`'s line, which names the extra
and the command that installs it into the environment Co runs from.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

from co_core.kernel.errors import CoError


@dataclass(frozen=True)
class Extra:
    modules: tuple[str, ...]  # importable when the extra is installed
    needs: str  # what the user tried, and "need(s)": "Gemini models need"


EXTRAS: dict[str, Extra] = {
    "anthropic": Extra(("anthropic",), "Anthropic models need"),
    "gemini": Extra(("google.genai",), "Gemini models need"),
    "mcp": Extra(("mcp", "fastmcp"), "MCP servers need"),
    "otlp": Extra(
        ("opentelemetry.exporter.otlp.proto.http",),
        "Sending traces to an OpenTelemetry collector needs",
    ),
}

# model providers (the part of a model string before ":") served by an extra; the others
# are in co-core itself (OpenAI's API) or named by pydantic-ai's own message
MODEL_EXTRAS = {
    "anthropic": "anthropic",
    "gemini": "gemini",
    "google": "gemini",
    "google-gla": "gemini",
    "google-vertex": "gemini",
}


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing
        return False


def installed(extra: str) -> bool:
    return all(_importable(module) for module in EXTRAS[extra].modules)


def install_command(requirement: str) -> str:
    """The command that installs ``requirement`` where Co runs from.

    Under pipx or ``uv tool`` a plain ``pip`` reaches another environment, so the answer is
    ``co plugins install``, which installs into Co's own (docs/plugins.md, "Install and use it").
    """
    prefix = Path(sys.prefix)
    isolated = (prefix / "uv-receipt.toml").exists() or "pipx" in prefix.parts
    quoted = f'"{requirement}"' if "[" in requirement else requirement
    return f"co plugins install {quoted}" if isolated else f"pip install {quoted}"


def missing(extra: str) -> str | None:
    """None when ``extra`` is installed, else one line saying what needs it and how to get it."""
    if installed(extra):
        return None
    return (
        f"{EXTRAS[extra].needs} co-core's {extra!r} extra, which is not installed: "
        f"{install_command(f'co-core[{extra}]')}"
    )


def require(extra: str) -> None:
    """Raise ``CoError`` with :func:`missing`'s line when ``extra`` is not installed."""
    line = missing(extra)
    if line is not None:
        raise CoError(line)


def require_for_model(spec: str) -> None:
    """Raise ``CoError`` when model string ``spec`` needs an extra that is missing."""
    extra = MODEL_EXTRAS.get(spec.partition(":")[0].strip())
    if extra is not None:
        require(extra)
