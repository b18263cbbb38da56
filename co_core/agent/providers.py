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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_core.agent.frontend import NoTerminal
from co_core.agent.local.catalog import human_size
from co_core.kernel.errors import CoError
from co_core.kernel.hookspecs import ModelRegister
from co_core.kernel.providers import BuiltModel, ModelRequest
from co_core.kernel.status import CheckResult, fail, ok, warn

if TYPE_CHECKING:
    from co_core.agent.local.pull import DownloadOffer

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

    from co_core.agent.served import steer
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
    from co_core.agent.served import compat_model, steer
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
    from co_core.agent.local.start import start_local

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


# The providers' rows for ``co status`` (co_core.agent.status asks them).

ASK_TIMEOUT = 3.0  # seconds a model server has to answer the check
GEMINI = "https://generativelanguage.googleapis.com/v1beta/models"


def ollama_row(name: str, settings: Any) -> CheckResult:
    return _ollama(f"ollama:{name}", name, settings.core.ollama_host)


def gemini_row(name: str, settings: Any) -> CheckResult:
    key = settings.core.gemini_api_key
    return _gemini(f"gemini:{name}", name, key.get_secret_value() if key is not None else "")


def compatible_row(name: str, settings: Any) -> CheckResult:
    secret = settings.core.api_key.get_secret_value() if settings.core.api_key else None
    return _compatible(f"openai-compatible:{name}", settings.core.base_url, secret)


def local_row(name: str, settings: Any) -> CheckResult:
    return _local(name, settings)


class _Looking(NoTerminal):
    """The conversation's frontend as ``co status`` plays it: a download the chat would
    offer is noted, not made, and what the chat would say instead is kept."""

    def __init__(self) -> None:
        self.offered: DownloadOffer | None = None
        self.said: list[str] = []

    def offer_download(self, offer: DownloadOffer) -> Path | None:
        self.offered = offer
        return None

    def notice(self, message: str) -> None:
        self.said.append(message)

    warn = notice


def _local(name: str, settings: Any) -> CheckResult:
    """The file ``local``/``local:NAME`` would run, found the way the chat finds it."""
    from co_core.agent.local import server as local_model
    from co_core.agent.local.start import local_file

    if not local_model.installed():
        return fail(f"local: not installed; {local_model.INSTALL_HINT}")
    looking = _Looking()
    try:
        path, spec = local_file(name, settings.section("local"), looking)
    except CoError as exc:
        return fail(f"local: {exc}")
    if not path.is_file():
        return fail(f"{spec}: {path} does not exist; set local.model_path to a GGUF file")
    offered = looking.offered
    if offered is not None:  # the model wanted is not here: the chat offers it first
        size = f" ({human_size(offered.size)})" if offered.size else ""
        return warn(
            f"{spec} for now; local:{offered.name}{size} is not downloaded: "
            f"`co models pull {offered.name}`, or co chat offers it"
        )
    return ok(f"{spec} ({path.name}; Co starts it when a turn needs it)")


def _get(url: str, headers: dict[str, str] | None = None) -> Any:
    import httpx

    return httpx.get(url, headers=headers, timeout=ASK_TIMEOUT)


def _unreachable(exc: Exception) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _ollama(spec: str, name: str, host: str) -> CheckResult:
    import httpx

    try:
        answer = _get(f"{host.rstrip('/')}/api/tags")
        answer.raise_for_status()
        listed = answer.json().get("models") or []
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        return fail(
            f"{spec}: Ollama does not answer at {host} ({_unreachable(exc)}); start it with "
            "`ollama serve`, or set OLLAMA_HOST"
        )
    names = {str(m.get("name") or m.get("model")) for m in listed if isinstance(m, dict)}
    if names and name not in names and f"{name}:latest" not in names:
        return fail(f"{spec}: Ollama at {host} does not have {name}: run `ollama pull {name}`")
    return ok(f"{spec} (Ollama answers at {host})")


def _gemini(spec: str, name: str, key: str) -> CheckResult:
    import httpx

    if not key:
        return fail(f"{spec}: no API key; set GEMINI_API_KEY (or `co config set gemini_api_key`)")
    try:
        answer = _get(f"{GEMINI}/{name}", headers={"x-goog-api-key": key})
    except httpx.HTTPError as exc:
        return fail(f"{spec}: Google's API cannot be reached ({_unreachable(exc)})")
    if answer.status_code in (400, 401, 403):
        return fail(f"{spec}: the API key was refused (HTTP {answer.status_code}); check it")
    if answer.status_code == 404:
        return fail(f"{spec}: Gemini has no model {name!r}; pick another with --model")
    if answer.status_code != 200:
        return fail(f"{spec}: Google's API answered HTTP {answer.status_code}")
    return ok(f"{spec} (Google's API answers)")


def _compatible(spec: str, base_url: str | None, key: str | None) -> CheckResult:
    import httpx

    if not base_url:
        return fail(f"{spec}: no server URL; set base_url (or CO_BASE_URL)")
    headers = {"Authorization": f"Bearer {key}"} if key else None
    try:
        answer = _get(f"{base_url.rstrip('/')}/models", headers=headers)
    except httpx.HTTPError as exc:
        return fail(f"{spec}: the server does not answer at {base_url} ({_unreachable(exc)})")
    if answer.status_code in (401, 403):
        return fail(f"{spec}: the server refused the API key (HTTP {answer.status_code})")
    if answer.status_code >= 500:
        return fail(f"{spec}: the server at {base_url} answered HTTP {answer.status_code}")
    return ok(f"{spec} (the server at {base_url} answers)")


def register(register: ModelRegister) -> None:
    """Co's providers, as ``co_core/agent/plugin.py``'s ``register_models`` gives them."""
    from co_core.agent.counting import estimate, tiktoken

    register(
        "ollama",
        build_ollama,
        status=ollama_row,
        counter=estimate,  # Ollama has no tokenize endpoint
        free=True,
        example="ollama:qwen3:4b",
    )
    register(
        "gemini",
        build_gemini,
        status=gemini_row,
        price=table_price("google"),
        example="gemini:gemini-2.5-flash",
    )
    register(
        "openai-compatible",
        build_compatible,
        status=compatible_row,
        example="openai-compatible:NAME (with --base-url)",
    )
    register(
        "local",
        build_local,
        status=local_row,
        free=True,
        example="local, local:NAME (`co models list`)",
        needs_name=False,
    )
    register("function", build_function, free=True, form=_function_form)
    for prefix in PYDANTIC_AI_PROVIDERS:
        example = "anthropic:NAME" if prefix == "anthropic" else ""
        price = table_price(PRICED_AS.get(prefix, prefix))
        counter = tiktoken if prefix.startswith(("openai", "azure")) else None
        register(prefix, build_pydantic_ai(prefix), price=price, counter=counter, example=example)
