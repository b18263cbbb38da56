"""Which counter counts for which model: its own tokenizer where one is at hand.

- the ``local`` model: the llama.cpp server Co started, as the local model reads a
  request (``local.py``);
- OpenAI's models: tiktoken (``tiktoken_counter.py``);
- other OpenAI-compatible servers: their own tokenize endpoint if they have one
  (llama.cpp, vLLM: ``server.py``), else the estimate;
- models whose provider counts tokens (Anthropic, Gemini, Bedrock): the estimate, checked
  by the provider's count near the limit (``provider.py``);
- everything else (Ollama, which has no tokenize endpoint; scripted models): the estimate
  (co_core.sessions.counting), corrected by the input tokens the provider reports.
"""

from __future__ import annotations

from typing import Any

from co_core.sessions.counting import Counter

TIKTOKEN_SYSTEMS = ("openai", "azure")
NO_TOKENIZER_SYSTEMS = ("ollama",)


def _base_url(model: Any) -> str | None:
    try:
        url = getattr(model, "base_url", None)
    except Exception:  # a provider that cannot say offline
        return None
    return url if isinstance(url, str) and url else None


def counter_for(model: Any) -> Counter:
    """A new counter for ``model`` (co_core.sessions.counting.Counting keeps one per model)."""
    from pydantic_ai.models.wrapper import WrapperModel

    from co_core.agent.local.constrained import ConstrainedModel

    if isinstance(model, ConstrainedModel):
        url = _base_url(model.wrapped)
        if url:
            from co_core.agent.counting.local import LocalCounter

            return LocalCounter(url)
    while isinstance(model, WrapperModel):
        model = model.wrapped
    system = getattr(model, "system", "")
    name = getattr(model, "model_name", "") or ""
    if system in TIKTOKEN_SYSTEMS:
        from co_core.agent.counting.tiktoken_counter import TiktokenCounter

        return TiktokenCounter(name)
    url = _base_url(model)
    if url and system not in NO_TOKENIZER_SYSTEMS and _is_openai_compatible(model):
        from co_core.agent.counting.server import ServerCounter

        return ServerCounter(url, name, _api_key(model))
    if _has_count_endpoint(model):
        from co_core.agent.counting.provider import ProviderCounter

        return ProviderCounter(model)
    return Counter()


def _api_key(model: Any) -> str | None:
    key = getattr(getattr(model, "client", None), "api_key", None)
    return key if isinstance(key, str) and key not in ("", "none") else None


def _has_count_endpoint(model: Any) -> bool:
    """Does pydantic-ai count tokens for this model class (Anthropic, Google, Bedrock)?"""
    from pydantic_ai.models import Model

    return type(model).count_tokens is not Model.count_tokens


def _is_openai_compatible(model: Any) -> bool:
    from pydantic_ai.models.openai import OpenAIChatModel

    return isinstance(model, OpenAIChatModel)
