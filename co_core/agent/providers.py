"""Co's own model providers, registered through ``register_models`` like any plugin's.

``ollama`` (OLLAMA_HOST), ``gemini`` (GEMINI_API_KEY), ``openai-compatible`` (with
``--base-url``), ``local`` (llama.cpp started by Co), ``function`` (a scripted pydantic-ai
model from Python: tests and benchmarks), ``anthropic`` and ``openai``, and every other
prefix pydantic-ai knows (``groq:``, ``mistral:``...). Each says how to build its model,
its ``co status`` row, and its prices; nothing else in Co names a provider.
"""

from __future__ import annotations

import importlib
from decimal import Decimal
from functools import partial
from typing import Any

from co_core.kernel.errors import CoError
from co_core.kernel.hookspecs import ModelRegister
from co_core.kernel.providers import BuiltModel, ModelRequest

# pydantic-ai's own providers (``infer_provider_class``; tests/test_models.py checks this
# list against the installed pydantic-ai), built by pydantic-ai from their model strings;
# its ``ollama`` is Co's own (above), which steers small models.
PYDANTIC_AI_PROVIDERS = (
    "alibaba", "anthropic", "azure", "azure-responses", "bedrock", "bedrock-mantle",
    "cerebras", "cohere", "crusoe", "deepseek", "elevenlabs", "fireworks", "github",
    "github-copilot", "google", "google-cloud", "google-decisions", "groq", "heroku",
    "huggingface", "litellm", "meta", "mistral", "moonshotai", "nebius", "openai",
    "openai-chat", "openai-chatgpt", "openai-codex", "openai-decisions", "openai-responses",
    "openrouter", "ovhcloud", "sambanova", "sentence-transformers", "snowflake",
    "system-one", "together", "typesafe", "vercel", "vllm", "voyageai", "xai", "zai",
)  # fmt: skip
# genai-prices' name for the providers whose prices it keeps, where it differs
PRICED_AS = {"google-cloud": "google", "openai-chat": "openai", "openai-responses": "openai"}


def table_price(provider_id: str) -> Any:
    """A price from genai-prices, the maintained price table, for ``provider_id``."""

    def price(usage: Any, name: str) -> Decimal | None:
        from genai_prices import calc_price

        return Decimal(calc_price(usage, name, provider_id=provider_id).total_price)

    return price


# -- building ---------------------------------------------------------------------------


def build_ollama(request: ModelRequest) -> Any:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.ollama import OllamaProvider

    from co_core.agent.models import steer
    from co_core.agent.size import ollama_parameters

    host = request.settings.core.ollama_host
    url = host.rstrip("/") + "/v1"
    model = OpenAIChatModel(request.name, provider=OllamaProvider(base_url=url))
    size = partial(ollama_parameters, host, request.name)
    return steer(model, request.settings, parameters=size, json=True)


def build_gemini(request: ModelRequest) -> Any:
    core = request.settings.core
    key = core.gemini_api_key.get_secret_value() if core.gemini_api_key else ""
    if not key:
        raise CoError(
            "gemini needs an API key: set GEMINI_API_KEY (or `co config set gemini_api_key ...`)"
        )
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    return GoogleModel(request.name, provider=GoogleProvider(api_key=key))


def build_compatible(request: ModelRequest) -> Any:
    from co_core.agent.models import compat_model, steer
    from co_core.agent.size import server_parameters

    core = request.settings.core
    server = request.base_url or core.base_url
    if not server:
        raise CoError(
            "openai-compatible models need a server URL: --base-url http://HOST:PORT/v1 "
            "(or setting base_url / CO_BASE_URL)"
        )
    secret = core.api_key.get_secret_value() if core.api_key else None
    model = compat_model(request.name, server, secret, "openai-compatible")
    size = partial(server_parameters, server, request.name)
    return steer(model, request.settings, parameters=size, json=False)


def build_local(request: ModelRequest) -> BuiltModel:
    from co_core.agent.frontend import NoTerminal
    from co_core.agent.models import start_local

    return start_local(request.name, request.settings, request.frontend or NoTerminal())


def build_function(request: ModelRequest) -> Any:
    """``function:MODULE:ATTRIBUTE``: a pydantic-ai model (or a factory of one) from Python."""
    module_name, colon, attr = request.name.partition(":")
    if not colon:
        raise CoError("should be function:MODULE:ATTRIBUTE")
    try:
        made = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise CoError(f"cannot load scripted model {request.name!r}: {exc}") from exc
    return made() if callable(made) and not hasattr(made, "request") else made


def _function_form(name: str) -> str | None:
    return None if ":" in name else "should be function:MODULE:ATTRIBUTE"


def build_pydantic_ai(prefix: str) -> Any:
    def build(request: ModelRequest) -> Any:
        from pydantic_ai.exceptions import UserError
        from pydantic_ai.models import infer_model

        spec = f"{prefix}:{request.name}"
        try:
            return infer_model(spec)
        except (UserError, ValueError, ImportError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CoError(f"model {spec!r}: {first}") from None

    return build


# -- status rows ------------------------------------------------------------------------


def status_of(name: str) -> Any:
    def status(model: str, settings: Any) -> Any:
        from co_core.agent import status as rows

        check = getattr(rows, name)
        return check(model, settings)

    return status


def register(register: ModelRegister) -> None:
    """Co's providers, as ``co_core/agent/plugin.py``'s ``register_models`` gives them."""
    register(
        "ollama",
        build_ollama,
        status=status_of("ollama_row"),
        free=True,
        example="ollama:qwen3:4b",
    )
    register(
        "gemini",
        build_gemini,
        status=status_of("gemini_row"),
        price=table_price("google"),
        example="gemini:gemini-2.5-flash",
    )
    register(
        "openai-compatible",
        build_compatible,
        status=status_of("compatible_row"),
        example="openai-compatible:NAME (with --base-url)",
    )
    register(
        "local",
        build_local,
        status=status_of("local_row"),
        free=True,
        example="local, local:NAME (`co models list`)",
        needs_name=False,
    )
    register("function", build_function, free=True, form=_function_form)
    for prefix in PYDANTIC_AI_PROVIDERS:
        example = "anthropic:NAME" if prefix == "anthropic" else ""
        price = table_price(PRICED_AS.get(prefix, prefix))
        register(prefix, build_pydantic_ai(prefix), price=price, example=example)
